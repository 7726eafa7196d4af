/**
 * Modules by hash over a real daemon (src/remote/module-upload.ts, src/server/module-endpoint.ts,
 * module-cache.ts): a large module crosses once per session, a tenant neither reads another's
 * modules nor puts one under a hash that is not its own, and a module the daemon dropped crosses
 * inline again.
 */
import { newMessagePortRpcSession, RpcSession, RpcTarget } from 'capnweb';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { bundlePackages } from '../../src/bundle/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { connect } from '../../src/remote/index.js';
import { executeWithModuleRefs } from '../../src/remote/module-upload.js';
import type { RemoteEndpoint } from '../../src/remote/session.js';
import { SocketTransport } from '../../src/remote/socket-transport.js';
import type { WebSocketConstructor, WebSocketLike } from '../../src/remote/websocket-types.js';
import { MODULE_NOT_HELD, moduleHash } from '../../src/wire/module-refs.js';
import type { WireExecuteRequest } from '../../src/wire/types.js';
import { startDaemon, stopAllDaemons } from '../support/daemon.js';

afterAll(stopAllDaemons);

const ZOD_PROGRAM = "async () => { const { z } = await import('zod'); return z.string().parse('ok') }";

/** A ws constructor that adds up the bytes its sockets send. */
function byteCountingWebSocket(): { websocket: WebSocketConstructor; sent: () => number } {
  let sent = 0;
  class Counting extends WebSocket {
    override send(data: unknown, ...rest: unknown[]): void {
      sent += typeof data === 'string' ? Buffer.byteLength(data) : (data as ArrayBuffer).byteLength;
      (super.send as (...args: unknown[]) => void)(data, ...rest);
    }
  }
  return { websocket: Counting as unknown as WebSocketConstructor, sent: () => sent };
}

type RawEndpoint = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** A capnweb session with a token and no RemoteExecutor, to call the module methods by hand. */
async function rawSession(url: string, token: string): Promise<{ remote: RawEndpoint; close(): void }> {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const remote = new RpcSession(
    new SocketTransport(socket as unknown as WebSocketLike),
  ).getRemoteMain() as unknown as RawEndpoint;
  await remote.protocolVersion!();
  return { remote, close: () => socket.terminate() };
}

describe('modules by hash', () => {
  it('sends a bundled package once per session, then only its hash', async () => {
    const daemon = await startDaemon();
    const counting = byteCountingWebSocket();
    const executor = new CodemodeExecutor(await connect(daemon.url, { websocket: counting.websocket }));
    try {
      const modules = await bundlePackages(['zod']);
      const size = Buffer.byteLength(modules.zod!.js);
      const before = counting.sent();
      expect(await executor.execute(ZOD_PROGRAM, [], { modules })).toEqual({ result: 'ok', logs: [] });
      const first = counting.sent() - before;
      expect(first).toBeGreaterThan(size);
      for (let round = 0; round < 3; round += 1) {
        const start = counting.sent();
        expect(await executor.execute(ZOD_PROGRAM, [], { modules })).toEqual({ result: 'ok', logs: [] });
        expect(counting.sent() - start).toBeLessThan(4096);
      }
    } finally {
      await executor.dispose();
    }
  });

  it("keeps each tenant's modules apart, and refuses a module put under a hash not its own", async () => {
    const daemon = await startDaemon(['--token', 'alpha', '--token', 'bravo']);
    const alpha = await rawSession(daemon.url, 'alpha');
    const bravo = await rawSession(daemon.url, 'bravo');
    try {
      const source = { js: `export const who = "alpha"; // ${'x'.repeat(20_000)}` };
      const hash = await moduleHash(source);
      expect(await alpha.remote.missingModules!([hash])).toEqual([hash]);
      await alpha.remote.putModules!({ [hash]: source });
      expect(await alpha.remote.missingModules!([hash])).toEqual([]);
      // Bravo cannot learn that alpha holds it, nor use it.
      expect(await bravo.remote.missingModules!([hash])).toEqual([hash]);
      const request = { code: "async () => (await import('lib')).who", dispatch: null, outboundMode: 'default' };
      await expect(bravo.remote.execute!({ ...request, moduleRefs: { lib: hash } })).rejects.toThrow(
        `The executor daemon does not hold the module "lib" (hash ${hash}) for this tenant: send it with putModules, or inline`,
      );
      expect(await alpha.remote.execute!({ ...request, moduleRefs: { lib: hash } })).toMatchObject({ result: 'alpha' });
      // Nor poison it: a module is kept under its own hash only.
      const forged = { js: 'export const who = "bravo"' };
      await expect(bravo.remote.putModules!({ [hash]: forged })).rejects.toThrow(
        `putModules was given a module under hash ${hash} whose hash is ${await moduleHash(forged)}`,
      );
      expect(await bravo.remote.missingModules!([hash])).toEqual([hash]);
    } finally {
      alpha.close();
      bravo.close();
    }
  });

  it('sends a module inline again when the daemon keeps none', async () => {
    const daemon = await startDaemon(['--max-module-cache-bytes', '0']);
    const executor = new CodemodeExecutor(await connect(daemon.url, { websocket: WebSocket as never }));
    try {
      const modules = await bundlePackages(['zod']);
      for (let round = 0; round < 2; round += 1)
        expect(await executor.execute(ZOD_PROGRAM, [], { modules })).toEqual({ result: 'ok', logs: [] });
    } finally {
      await executor.dispose();
    }
  });
});

/** An execute request with one module large enough to cross by hash. */
function largeModuleRequest(): { wire: WireExecuteRequest; modules: WireExecuteRequest['modules'] } {
  const modules = { big: { js: `export const x = "${'x'.repeat(20_000)}"` } };
  return { wire: { code: 'async () => 1', dispatch: null, outboundMode: 'default', modules }, modules };
}

describe('a daemon without the module methods', () => {
  it('gets every module inline, and is not asked again in the session', async () => {
    // An older daemon's endpoint, over a real capnweb session: capnweb words the missing method.
    const sent: WireExecuteRequest[] = [];
    class Older extends RpcTarget {
      execute(wire: WireExecuteRequest) {
        sent.push(wire);
        return { result: 1, logs: [] };
      }
    }
    const channel = new MessageChannel();
    newMessagePortRpcSession(channel.port1, new Older());
    const stub = newMessagePortRpcSession(channel.port2) as unknown as RemoteEndpoint;
    let asked = 0;
    const older = {
      missingModules: (hashes: string[]) => {
        asked += 1;
        return stub.missingModules(hashes);
      },
      execute: (wire: WireExecuteRequest) => stub.execute(wire),
    } as unknown as RemoteEndpoint;
    const { wire, modules } = largeModuleRequest();
    try {
      await executeWithModuleRefs(older, wire);
      await executeWithModuleRefs(older, wire);
    } finally {
      channel.port1.close();
      channel.port2.close();
    }
    expect(asked).toBe(1);
    expect(sent.map((request) => [request.modules, request.moduleRefs])).toEqual([
      [modules, undefined],
      [modules, undefined],
    ]);
  });

  it("takes a current daemon's refusal of missingModules for that call only, whatever its text says", async () => {
    // A refusal with a code comes from a daemon that has the method, even worded like a missing one.
    let asked = 0;
    const current = {
      missingModules: async () => {
        asked += 1;
        throw Object.assign(new Error('module method not found: is not a function'), { code: 'LIMIT_EXCEEDED' });
      },
      execute: async () => ({ result: 1, logs: [] }),
    } as unknown as RemoteEndpoint;
    const { wire } = largeModuleRequest();
    await executeWithModuleRefs(current, wire);
    await executeWithModuleRefs(current, wire);
    expect(asked).toBe(2);
  });
});

describe('a module the daemon no longer holds', () => {
  it('is refused with the reason MODULE_NOT_HELD, which crosses capnweb beside the code', async () => {
    const daemon = await startDaemon();
    const session = await rawSession(daemon.url, 'unused');
    try {
      const hash = await moduleHash({ js: 'export const x = 1' });
      const refused = await session.remote.execute!({
        code: 'async () => 1',
        dispatch: null,
        outboundMode: 'default',
        moduleRefs: { gone: hash },
      }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'INVALID_REQUEST', reason: MODULE_NOT_HELD });
    } finally {
      session.close();
    }
  });

  it('is sent again inline when the refusal carries the reason, whatever its text', async () => {
    const sent: WireExecuteRequest[] = [];
    const forgetful = {
      missingModules: async () => [],
      execute: async (wire: WireExecuteRequest) => {
        sent.push(wire);
        if (wire.moduleRefs !== undefined)
          throw Object.assign(new Error('reworded'), { code: 'INVALID_REQUEST', reason: MODULE_NOT_HELD });
        return { result: 1, logs: [] };
      },
    } as unknown as RemoteEndpoint;
    const { wire, modules } = largeModuleRequest();
    expect(await executeWithModuleRefs(forgetful, wire)).toEqual({ result: 1, logs: [] });
    expect(sent.map((request) => [request.modules, request.moduleRefs === undefined])).toEqual([
      [undefined, false],
      [modules, true],
    ]);
  });
});
