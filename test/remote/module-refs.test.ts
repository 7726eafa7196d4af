/**
 * Modules by hash over a real daemon (src/remote/module-upload.ts, src/server/modules/module-endpoint.ts,
 * module-cache.ts): a large module crosses once per session, a tenant neither reads another's
 * modules nor puts one under a hash that is not its own, and a module the daemon dropped crosses
 * inline again.
 */
import { RpcSession } from 'capnweb';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { bundlePackages } from '../../src/bundle/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { connect } from '../../src/remote/index.js';
import { executeWithModuleRefs } from '../../src/remote/module-upload.js';
import type { RemoteEndpoint } from '../../src/remote/session.js';
import { SocketTransport } from '../../src/remote/socket-transport.js';
import type { WebSocketConstructor, WebSocketLike } from '../../src/remote/websocket-types.js';
import { moduleHash } from '../../src/wire/module-refs.js';
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

describe('a daemon without the module methods', () => {
  it('gets every module inline, and is not asked again in the session', async () => {
    // What capnweb answers for a method the daemon's endpoint does not have (an older daemon).
    let asked = 0;
    const sent: WireExecuteRequest[] = [];
    const older = {
      missingModules: async () => {
        asked += 1;
        throw new TypeError("'missingModules' is not a function.");
      },
      execute: async (wire: WireExecuteRequest) => {
        sent.push(wire);
        return { result: 1, logs: [] };
      },
    } as unknown as RemoteEndpoint;
    const modules = { big: { js: `export const x = "${'x'.repeat(20_000)}"` } };
    const wire: WireExecuteRequest = { code: 'async () => 1', dispatch: null, outboundMode: 'default', modules };
    await executeWithModuleRefs(older, wire);
    await executeWithModuleRefs(older, wire);
    expect(asked).toBe(1);
    expect(sent.map((request) => [request.modules, request.moduleRefs])).toEqual([
      [modules, undefined],
      [modules, undefined],
    ]);
  });
});
