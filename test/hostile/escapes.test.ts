/**
 * Escape probes on the real workerd: what sandboxed code can reach of the harness, the host and
 * the network. Each probe is what an attacker would try first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { createEnvelopeDispatch, type ProviderHandler } from '../../src/protocol/dispatch.js';
import { ExecutionTimeoutError } from '../../src/protocol/errors.js';
import type { Dispatch } from '../../src/protocol/types.js';

let executor: IsolateExecutor;

beforeAll(() => {
  executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
});

afterAll(async () => {
  await executor.dispose();
});

function dispatchFor(handlers: Record<string, ProviderHandler>): Dispatch {
  return createEnvelopeDispatch(handlers, { active: true });
}

const run = (request: Parameters<IsolateExecutor['execute']>[0]) => executor.execute(request);

describe('the harness', () => {
  it('keeps the harness working when a provider shadows JSON, and leaks no harness name into user scope', async () => {
    const dispatch = dispatchFor({
      JSON: (tool, args) => `${tool}:${JSON.stringify(args)}`,
      api: (tool, args) => ({ tool, args }),
    });
    const outcome = await run({
      code: `async () => {
        const names = ['__logs', '__dispatchers', 'codec', 'bridge', 'dispatch', 'namespace', 'evaluate', 'Entrypoint', 'settle', 'logs'];
        return {
          viaJson: await JSON.stringify({ a: 1 }),
          viaApi: await api.echo(new Uint8Array([5])),
          onGlobal: names.filter((name) => name in globalThis).concat(Object.getOwnPropertyNames(globalThis).filter((name) => name.includes('codemode'))),
          inScope: [typeof __logs, typeof __dispatchers, typeof codec, typeof bridge, typeof dispatch, typeof namespace, typeof evaluate, typeof Entrypoint, typeof settle, typeof logs].filter((type) => type !== 'undefined'),
          harness: typeof __codemode,
          harnessModule: await import("__codemode_harness.js").then(() => "loaded", (e) => e.message),
        };
      }`,
      providers: [
        { name: 'JSON', tools: ['stringify'] },
        { name: 'api', tools: ['echo'] },
      ],
      dispatch,
    });
    expect(outcome.result).toEqual({
      viaJson: 'stringify:[{"a":1}]',
      viaApi: { tool: 'echo', args: [new Uint8Array([5])] },
      onGlobal: [],
      inScope: [],
      harness: 'undefined',
      harnessModule: expect.stringMatching(/^No such module "__codemode_harness\.js"/),
    });
  });

  // A program can learn the harness module's name from a frame of the console capture on a stack,
  // and import it. Each probe does, then settles 900 ms past a 300 ms bound: past the 250 ms by
  // which a run that ends before its race timer fired may be late on a loaded host, and inside the
  // host's grace period for a process that is not spinning.
  const findHarness = `let frames = "";
        console.log({ toString() { frames = new Error().stack; return "" } });
        const __codemode = await import(/\\(([^():]*_harness\\.js):/.exec(frames)[1]);`;
  const forgeries = {
    'settling the race early with returned()': '__codemode.returned(0);',
    'settling the race early with threw()': '__codemode.threw(0);',
    'racing a settled promise of its own first': '__codemode.raced(Promise.resolve(0));',
    'racing again later, after clearing every timer, to move the deadline': `setTimeout(() => {
        for (let i = 0; i < 1e5; i++) if (i !== own) clearTimeout(i);
        __codemode.raced(0);
      }, 250);`,
  };
  for (const [forgery, prefix] of Object.entries(forgeries)) {
    it(`cannot forge a win of the race by ${forgery}: a run past its bound times out`, async () => {
      const outcome = await run({
        code: `async () => {
        let finish;
        const settled = new Promise((resolve) => (finish = resolve));
        const own = setTimeout(() => finish("late"), 1200);
        ${findHarness}
        ${prefix}
        return await settled;
      }`,
        timeout: 300,
      });
      // The verdict is the point. The line logged before may be lost: on a loaded host the process
      // can still be waiting when its cancel grace ends, and is then killed with what it held.
      expect({ result: outcome.result, error: outcome.error }).toEqual({
        result: undefined,
        error: ExecutionTimeoutError.format(300),
      });
      expect(await run({ code: 'async () => "next"' })).toEqual({ result: 'next', logs: [] });
    });
  }
});

describe('the host and the network', () => {
  it('refuses code generation from strings, the classic way out of a realm', async () => {
    const outcome = await run({
      code: 'async () => { try { return console.log.constructor("return process")() } catch (e) { return e.message } }',
    });
    expect(outcome.result).toBe('Code generation from strings disallowed for this context');
  });

  it("sees none of the host's environment, and no bindings of the supervisor", async () => {
    const outcome = await run({
      code: 'async () => [Object.keys(process.env), Object.keys(this.env ?? {})]',
    });
    expect(outcome.result).toEqual([[], []]);
  });

  it('cannot open a socket or fetch when outbound is blocked', async () => {
    const outcome = await run({
      code: `import { connect } from 'cloudflare:sockets';
async () => {
  const out = [];
  try { const socket = connect('127.0.0.1:22'); await socket.opened; out.push('connected') } catch (e) { out.push('socket refused') }
  try { await fetch('http://127.0.0.1:1/'); out.push('fetched') } catch (e) { out.push('fetch refused') }
  return out;
}`,
      outbound: null,
    });
    expect(outcome.result).toEqual(['socket refused', 'fetch refused']);
  });
});
