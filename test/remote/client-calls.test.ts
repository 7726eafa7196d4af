/**
 * Which call a request is sent from, as the remote client names it (`parent` on the wire): by
 * async context where the runtime has `node:async_hooks` (Node does), and only when unambiguous
 * where it has not (a Worker without nodejs_compat, which has no `process`). The module runs under
 * real workerd both ways.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import type { Dispatch } from '../../src/protocol/types.js';
import { ClientCalls, runtimeFrameStorage } from '../../src/remote/client-calls.js';

/** A tracked dispatch for a new call of `calls`, whose every tool call reports `calls.parent()` from inside it. */
function call(calls: ClientCalls, seen: (parent: string | undefined) => void = () => {}) {
  const id = calls.nextId();
  const dispatch: Dispatch = async () => {
    await Promise.resolve();
    seen(calls.parent());
    await new Promise((resolve) => setTimeout(resolve, 20));
    seen(calls.parent());
    return '{}';
  };
  return { id, dispatch: calls.track(id, { dispatch }).dispatch! };
}

describe('with async context (Node)', () => {
  it('finds node:async_hooks at run time', () => {
    expect(runtimeFrameStorage()).not.toBeNull();
  });

  it('names the call whose tool call a request is sent from, however many calls have tool calls in flight', async () => {
    const calls = new ClientCalls(runtimeFrameStorage());
    const seen: Record<string, (string | undefined)[]> = { a: [], b: [] };
    const a = call(calls, (parent) => seen.a!.push(parent));
    const b = call(calls, (parent) => seen.b!.push(parent));
    let outside: string | undefined = 'unset';
    await Promise.all([
      a.dispatch('codemode', 'x', '[]'),
      b.dispatch('codemode', 'y', '[]'),
      b.dispatch('codemode', 'z', '[]'),
      Promise.resolve().then(() => {
        outside = calls.parent();
      }),
    ]);
    expect(seen).toEqual({ a: [a.id, a.id], b: [b.id, b.id, b.id, b.id] });
    // A request sent beside them, from no tool call, names none.
    expect(outside).toBeUndefined();
  });

  it('names no call of another client, nor a tool call that has answered', async () => {
    const storage = runtimeFrameStorage();
    const calls = new ClientCalls(storage);
    const other = new ClientCalls(storage);
    let fromOther: string | undefined = 'unset';
    let afterAnswer: Promise<string | undefined> | undefined;
    const { dispatch } = call(other);
    const mine = calls.track(calls.nextId(), {
      dispatch: (async () => {
        afterAnswer = new Promise((resolve) => setTimeout(() => resolve(calls.parent()), 10));
        return '{}';
      }) as Dispatch,
    });
    await other.track(other.nextId(), {
      dispatch: (async () => {
        fromOther = calls.parent();
        return dispatch('codemode', 'x', '[]');
      }) as Dispatch,
    }).dispatch!('codemode', 'x', '[]');
    await mine.dispatch!('codemode', 'x', '[]');
    expect(fromOther).toBeUndefined();
    expect(await afterAnswer).toBeUndefined();
  });
});

describe('without async context (a Worker without nodejs_compat)', () => {
  it('names a call only while it is the one call with a tool call in flight', async () => {
    const calls = new ClientCalls(null);
    expect(calls.parent()).toBeUndefined();
    const a = call(calls);
    const b = call(calls);
    const first = a.dispatch('codemode', 'x', '[]');
    const whileOnlyA = calls.parent();
    const second = b.dispatch('codemode', 'y', '[]');
    const whileBoth = calls.parent();
    await Promise.all([first, second]);
    expect([whileOnlyA, whileBoth, calls.parent()]).toEqual([a.id, undefined, undefined]);
  });
});

describe('under workerd', () => {
  const root = resolve(import.meta.dirname, '..', '..');
  let dir: string | undefined;

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs WORKER_TEST against the bundled module under workerd with `flags`; resolves with its output. */
  async function runUnderWorkerd(flags: string[]): Promise<string> {
    dir ??= await mkdtemp(join(tmpdir(), 'client-calls-workerd-'));
    const bundle = await build({
      entryPoints: [join(root, 'src', 'remote', 'client-calls.ts')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      logLevel: 'silent',
    });
    await writeFile(join(dir, 'client-calls.js'), bundle.outputFiles[0]!.text);
    await writeFile(join(dir, 'main.js'), WORKER_TEST);
    const config = join(dir, `config-${flags.length}.capnp`);
    await writeFile(config, workerdConfig(flags));
    const workerd = join(root, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
    const { stdout, stderr } = await promisify(execFile)(workerd, ['test', config], { timeout: 60_000 }).catch(
      (error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`workerd test failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      },
    );
    return `${stdout}${stderr}`;
  }

  it('with nodejs_compat, finds async context and names the parent precisely', async () => {
    const output = await runUnderWorkerd(['nodejs_compat']);
    expect(output).toContain('[ PASS ] main');
    expect(output).toContain('parents {"precise":true,"a":"1","b":"2","beside":null}');
  });

  it('without it, names a parent only while one call has a tool call in flight', async () => {
    const output = await runUnderWorkerd([]);
    expect(output).toContain('[ PASS ] main');
    expect(output).toContain('parents {"precise":false,"a":null,"b":null,"beside":null}');
  });
});

function workerdConfig(flags: string[]): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .mainWorker) ] );
const mainWorker :Workerd.Worker = (
  modules = [
    (name = "main.js", esModule = embed "main.js"),
    (name = "client-calls.js", esModule = embed "client-calls.js"),
  ],
  compatibilityDate = "2025-06-01",
  compatibilityFlags = [${flags.map((flag) => JSON.stringify(flag)).join(', ')}],
);
`;
}

/** Two calls with a tool call in flight at once: each tool asks which call it is sent from, and a request beside them asks too. */
const WORKER_TEST = `import { ClientCalls, runtimeFrameStorage } from './client-calls.js';

export default {
  async test() {
    const calls = new ClientCalls();
    const seen = {};
    let bothAsked;
    const asked = new Promise((resolve) => { bothAsked = resolve; });
    // Each tool asks while the other is still in flight, then waits for the other to have asked.
    const tool = (name) => async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen[name] = calls.parent() ?? null;
      if (Object.keys(seen).length === 2) bothAsked();
      await asked;
      return '{}';
    };
    const a = calls.track(calls.nextId(), { dispatch: tool('a') });
    const b = calls.track(calls.nextId(), { dispatch: tool('b') });
    const both = Promise.all([a.dispatch('p', 't', '[]'), b.dispatch('p', 't', '[]')]);
    const beside = calls.parent() ?? null;
    await both;
    console.log('parents ' + JSON.stringify({ precise: runtimeFrameStorage() !== null, a: seen.a, b: seen.b, beside }));
  },
};
`;
