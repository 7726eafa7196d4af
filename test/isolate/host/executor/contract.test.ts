/**
 * The native contract on the real workerd: one executor (one workerd process) for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch, type ProviderHandler } from '../../../../src/protocol/dispatch.js';
import { ExecutorError, ToolNotFoundError } from '../../../../src/protocol/errors.js';
import { FUNCTION_NOT_RETAINED_MESSAGE, providerRejection } from '../../../../src/protocol/texts.js';
import { type Dispatch, type ExecuteRequest, HANDLE_KEY, type OutboundFetch } from '../../../../src/protocol/types.js';

/** Every request the construction-level outbound answered. */
const seenByDefaultOutbound: string[] = [];
const defaultOutbound: OutboundFetch = (request) => {
  seenByDefaultOutbound.push(request.url);
  return new Response('from the construction default');
};

let executor: IsolateExecutor;

beforeAll(() => {
  executor = new IsolateExecutor({ outbound: defaultOutbound, pool: { maxWorkers: 1, spare: 0 } });
});

afterAll(async () => {
  await executor.dispose();
});

function dispatchFor(handlers: Record<string, ProviderHandler>): Dispatch {
  return createEnvelopeDispatch(handlers, { active: true });
}

/** A provider whose tools return what they were called with. */
const echoDispatch = dispatchFor({
  api: (tool, args) => ({ tool, args }),
  legacy: (tool, args) => ({ tool, args }),
});

async function run(request: ExecuteRequest) {
  return executor.execute(request);
}

describe('results and logs', () => {
  it('returns the settled value with an empty log', async () => {
    expect(await run({ code: 'async () => 6 * 7' })).toEqual({ result: 42, logs: [] });
  });

  it('captures log, warn and error with their levels, each argument through String(), joined by one space', async () => {
    const outcome = await run({
      code: `async () => {
        console.log('a', 1, { x: 1 }, [1, [2, 3]], null, undefined, 10n, Symbol('s'));
        console.warn();
        console.error(new Error('e1'));
        console.info('not captured');
        console.debug('not captured');
        return 'done';
      }`,
    });
    expect(outcome).toEqual({
      result: 'done',
      logs: [
        { level: 'log', message: 'a 1 [object Object] 1,2,3 null undefined 10 Symbol(s)' },
        { level: 'warn', message: '' },
        { level: 'error', message: 'Error: e1' },
      ],
    });
  });

  it('lets console.log of a null-prototype object throw in user code, as upstream', async () => {
    const outcome = await run({
      code: `async () => { try { console.log(Object.create(null)); return 'logged' } catch (e) { return e.constructor.name + ': ' + e.message } }`,
    });
    expect(outcome.result).toBe('TypeError: Cannot convert object to primitive value');
  });

  it('hands the host the value structured clone would, so JSON.stringify agrees with upstream', async () => {
    const outcome = await run({
      code: `async () => ({
        map: new Map([[1, { a: 2 }]]), set: new Set(['s']), date: new Date(0), bytes: new Uint8Array([1, 2]),
        buffer: new Uint16Array([258]).buffer, missing: undefined, list: [undefined, NaN, -0, Infinity],
        regexp: /x+/gi, error: new TypeError('bad'), nested: { deep: [1, 'two'] },
      })`,
    });
    // The reference: the same value built here and structured-cloned by the host's own runtime.
    const reference = structuredClone({
      map: new Map([[1, { a: 2 }]]),
      set: new Set(['s']),
      date: new Date(0),
      bytes: new Uint8Array([1, 2]),
      buffer: new Uint16Array([258]).buffer,
      missing: undefined,
      list: [undefined, NaN, -0, Infinity],
      regexp: /x+/gi,
      error: new TypeError('bad'),
      nested: { deep: [1, 'two'] },
    });
    expect(JSON.stringify(outcome.result)).toBe(JSON.stringify(reference));
    const value = outcome.result as Record<string, unknown>;
    expect(value.map).toEqual(new Map([[1, { a: 2 }]]));
    expect(value.set).toEqual(new Set(['s']));
    expect(value.date).toEqual(new Date(0));
    expect(value.bytes).toEqual(new Uint8Array([1, 2]));
    expect(new Uint8Array(value.buffer as ArrayBuffer)).toEqual(new Uint8Array(new Uint16Array([258]).buffer));
    expect('missing' in value).toBe(true);
    expect(Object.is((value.list as unknown[])[2], -0)).toBe(true);
    expect(Number.isNaN((value.list as unknown[])[1])).toBe(true);
    expect(value.regexp).toEqual(/x+/gi);
    expect(value.error).toBeInstanceOf(TypeError);
    expect((value.error as Error).message).toBe('bad');
  });

  it('carries BigInt, shared and cyclic references', async () => {
    const outcome = await run({
      code: `async () => { const shared = { n: 1n }; const o = { a: shared, b: shared }; o.self = o; return o }`,
    });
    const value = outcome.result as { a: { n: bigint }; b: unknown; self: unknown };
    expect(value.a.n).toBe(1n);
    expect(value.b).toBe(value.a);
    expect(value.self).toBe(value);
  });

  it('reports a result workerd cannot serialize as an error, with the runtime text', async () => {
    const outcome = await run({
      code: `async () => { console.log('before'); class Foo { constructor() { this.a = 1 } } return new Foo() }`,
    });
    expect(outcome.error).toBe('Could not serialize object of type "Foo". This type does not support serialization.');
    expect(outcome.logs).toEqual([{ level: 'log', message: 'before' }]);
  });

  it('turns a function in a non-retained result into a host function that says why it cannot run', async () => {
    const outcome = await run({ code: 'async () => ({ f: () => 1 })' });
    const f = (outcome.result as { f: () => Promise<unknown> }).f;
    expect(typeof f).toBe('function');
    expect(JSON.stringify(outcome.result)).toBe('{}');
    await expect(f()).rejects.toMatchObject({ code: 'HANDLE_NOT_FOUND', message: FUNCTION_NOT_RETAINED_MESSAGE });
  });
});

describe('thrown values and load failures', () => {
  const cases: [string, string][] = [
    ['throw new RangeError("out of range")', 'out of range'],
    ['throw "plain string"', 'plain string'],
    ['throw { message: "from an object" }', 'from an object'],
    ['throw new Error("")', 'Error'],
    ['throw Object.create(null)', '[object Object]'],
    ['throw null', 'null'],
    ['throw undefined', 'undefined'],
    ['throw 0', '0'],
  ];
  for (const [statement, text] of cases) {
    it(`${statement} becomes the error ${JSON.stringify(text)}`, async () => {
      expect(await run({ code: `async () => { console.log('ran'); ${statement} }` })).toEqual({
        result: undefined,
        error: text,
        logs: [{ level: 'log', message: 'ran' }],
      });
    });
  }

  it('reports a module that fails to load with the engine message, as a result', async () => {
    expect(await run({ code: 'async () => { return ( }' })).toEqual({
      result: undefined,
      error: "SyntaxError: Unexpected token '}'",
      logs: [],
    });
  });

  it('reports a throwing prelude as a result', async () => {
    const outcome = await run({
      code: 'async () => 1',
      providers: [{ name: 'api', tools: [], prelude: 'throw new Error("prelude boom")' }],
      dispatch: echoDispatch,
    });
    expect(outcome).toEqual({ result: undefined, error: 'prelude boom', logs: [] });
  });
});

describe('providers', () => {
  it('sends every argument by default and spreads them on the host', async () => {
    const outcome = await run({
      code: 'async () => api.echo(1, "two", { three: 3 })',
      providers: [{ name: 'api', tools: ['echo'] }],
      dispatch: echoDispatch,
    });
    expect(outcome.result).toEqual({ tool: 'echo', args: [1, 'two', { three: 3 }] });
  });

  it('sends the first argument alone, or {}, when positionalArgs is false', async () => {
    const outcome = await run({
      code: 'async () => [await legacy.one(1, 2), await legacy.none(), await legacy.nil(null)]',
      providers: [{ name: 'legacy', tools: [], positionalArgs: false }],
      dispatch: echoDispatch,
    });
    expect(outcome.result).toEqual([
      { tool: 'one', args: [1] },
      { tool: 'none', args: [{}] },
      { tool: 'nil', args: [{}] },
    ]);
  });

  it('returns undefined for symbol keys and then, so a namespace is not a thenable', async () => {
    const outcome = await run({
      code: 'async () => { const same = await api; return [same === api, typeof api.then, typeof api[Symbol.iterator], typeof api.anything] }',
      providers: [{ name: 'api', tools: [] }],
      dispatch: echoDispatch,
    });
    expect(outcome.result).toEqual([true, 'undefined', 'undefined', 'function']);
  });

  it('turns an error envelope into a thrown Error with its message, and names an unknown tool', async () => {
    const dispatch = dispatchFor({
      api: (tool) => {
        if (tool === 'fail') throw new TypeError('tool failed');
        throw new ToolNotFoundError(tool);
      },
    });
    const outcome = await run({
      code: `async () => {
        const out = [];
        for (const name of ['fail', 'nope']) { try { await api[name]() } catch (e) { out.push(e.constructor.name + ': ' + e.message) } }
        return out;
      }`,
      providers: [{ name: 'api', tools: ['fail'] }],
      dispatch,
    });
    expect(outcome.result).toEqual(['Error: tool failed', 'Error: Tool "nope" not found']);
  });

  it('binds proxySource members first and dispatches every other key, under the convention', async () => {
    const outcome = await run({
      code: 'async () => [api.version, await api.twice(2), await api.other("x")]',
      providers: [
        {
          name: 'api',
          tools: ['other'],
          positionalArgs: false,
          proxySource:
            '(call) => ({ version: "v1", twice: async (n) => (await call("double", n, "dropped")).args[0] * 2 })',
        },
      ],
      dispatch: echoDispatch,
    });
    expect(outcome.result).toEqual(['v1', 4, { tool: 'other', args: ['x'] }]);
  });

  it('runs preludes after every namespace is bound, in provider order, and a prelude member beats a tool', async () => {
    const outcome = await run({
      code: 'async () => [order, await api.hello(), await legacy.hello()]',
      providers: [
        { name: 'api', tools: ['hello'], prelude: 'const order = [typeof legacy]; api.hello = () => "prelude-hello";' },
        { name: 'legacy', tools: ['hello'], prelude: 'order.push("second");' },
      ],
      dispatch: echoDispatch,
    });
    expect(outcome.result).toEqual([['object', 'second'], 'prelude-hello', { tool: 'hello', args: [] }]);
  });

  it('refuses a reserved provider name with the protocol text, without a sandbox', async () => {
    const before = executor.stats().members.reduce((sum, member) => sum + member.runs, 0);
    const outcome = await run({
      code: 'async () => 1',
      providers: [{ name: 'console', tools: [] }],
      dispatch: echoDispatch,
    });
    expect(outcome).toEqual({ result: undefined, error: providerRejection.reserved('console'), logs: [] });
    expect(executor.stats().members.reduce((sum, member) => sum + member.runs, 0)).toBe(before);
  });
});

describe('binary values through a tool call', () => {
  it('carries Uint8Array, ArrayBuffer and views both ways', async () => {
    let received: unknown[] = [];
    const dispatch = dispatchFor({
      bin: (tool, args) => {
        received = args;
        return { bytes: new Uint8Array([9, 8, 7]), buffer: new Uint8Array([1, 2]).buffer };
      },
    });
    const outcome = await run({
      code: `async () => {
        const back = await bin.swap(new Uint8Array([1, 2, 3]), new Uint16Array([258]).buffer, new DataView(new Uint8Array([4, 5]).buffer), { nested: [new Uint8Array([6])] });
        return [back.bytes instanceof Uint8Array, [...back.bytes], back.buffer instanceof ArrayBuffer, [...new Uint8Array(back.buffer)]];
      }`,
      providers: [{ name: 'bin', tools: ['swap'] }],
      dispatch,
    });
    expect(outcome.result).toEqual([true, [9, 8, 7], true, [1, 2]]);
    expect(received[0]).toEqual(new Uint8Array([1, 2, 3]));
    expect(received[1]).toBeInstanceOf(ArrayBuffer);
    expect(new Uint8Array(received[1] as ArrayBuffer)).toEqual(new Uint8Array(new Uint16Array([258]).buffer));
    expect(received[2]).toEqual(new Uint8Array([4, 5]));
    expect(received[3]).toEqual({ nested: [new Uint8Array([6])] });
  });
});

describe('modules', () => {
  const modules = {
    'lib.js': 'console.log("lib evaluated"); export const base = 40; export function add(a, b) { return a + b }',
    'lazy.js': 'console.log("lazy loaded"); export default 2;',
    'data.json': { json: { answer: 42 } },
    'note.txt': { text: 'plain text' },
    // The harness's old fixed name: a module like any other now, since the harness's own name is
    // drawn per process, so the harness still loads beside it.
    '__codemode_harness.js': 'export const hijacked = true;',
  };

  it('runs static imports ahead of the arrow and dynamic imports inside it', async () => {
    const outcome = await run({
      code: `import { base, add } from 'lib.js';
import data from 'data.json';
import note from 'note.txt';
async () => { const lazy = await import('lazy.js'); return [add(base, lazy.default), data.answer, note] }`,
      modules,
    });
    // Capture starts before user modules evaluate, so a static import's top level is captured too.
    expect(outcome).toEqual({
      result: [42, 42, 'plain text'],
      logs: [
        { level: 'log', message: 'lib evaluated' },
        { level: 'log', message: 'lazy loaded' },
      ],
    });
  });

  it('rejects a module that is not source text or a known module kind', async () => {
    await expect(run({ code: 'async () => 1', modules: { 'bad.js': { wasm: 'x' } as never } })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: isolateText.modulesInvalid('bad.js'),
    });
  });
});

describe('isolation', () => {
  it('gives every execution a fresh isolate: no globals, module state or timers carry over', async () => {
    const first = await run({
      code: `import { counter } from 'state.js';
async () => { globalThis.leaked = 'yes'; counter.n += 1; setInterval(() => console.log('timer from the first run'), 1); await new Promise((r) => setTimeout(r, 20)); return counter.n }`,
      modules: { 'state.js': 'export const counter = { n: 0 };' },
    });
    expect(first.result).toBe(1);
    const second = await run({
      code: `import { counter } from 'state.js';
async () => { await new Promise((r) => setTimeout(r, 50)); counter.n += 1; return [typeof globalThis.leaked, counter.n] }`,
      modules: { 'state.js': 'export const counter = { n: 0 };' },
    });
    expect(second).toEqual({ result: ['undefined', 1], logs: [] });
  });
});

describe('outbound', () => {
  it('uses the construction default when the request leaves outbound undefined', async () => {
    const before = seenByDefaultOutbound.length;
    const outcome = await run({ code: 'async () => (await fetch("https://example.test/default")).text()' });
    expect(outcome.result).toBe('from the construction default');
    expect(seenByDefaultOutbound.slice(before)).toEqual(['https://example.test/default']);
  });

  it("blocks with workerd's own error when the request passes null", async () => {
    const outcome = await run({ code: 'async () => { await fetch("https://example.test/") }', outbound: null });
    expect(outcome.error).toBe(
      "This worker is not permitted to access the internet via global functions like fetch(). It must use capabilities (such as bindings in 'env') to talk to the outside world.",
    );
  });

  it('routes every fetch to the host function: a standard Request in, a Response out, bodies as bytes', async () => {
    const seen: { method: string; url: string; header: string | null; body: number[] }[] = [];
    const outbound: OutboundFetch = async (request) => {
      seen.push({
        method: request.method,
        url: request.url,
        header: request.headers.get('x-probe'),
        body: [...new Uint8Array(await request.arrayBuffer())],
      });
      return new Response(new Uint8Array([200, 1]), {
        status: 201,
        statusText: 'Made',
        headers: { 'x-answer': 'yes' },
      });
    };
    const outcome = await run({
      code: `async () => {
        const response = await fetch('https://example.test/upload?q=1', { method: 'PUT', headers: { 'x-probe': 'p' }, body: new Uint8Array([0, 255, 7]) });
        const empty = await fetch('https://example.test/get');
        return [response.status, response.statusText, response.headers.get('x-answer'), [...new Uint8Array(await response.arrayBuffer())], empty.status];
      }`,
      outbound,
    });
    expect(outcome.result).toEqual([201, 'Made', 'yes', [200, 1], 201]);
    expect(seen).toEqual([
      { method: 'PUT', url: 'https://example.test/upload?q=1', header: 'p', body: [0, 255, 7] },
      { method: 'GET', url: 'https://example.test/get', header: null, body: [] },
    ]);
  });

  it('makes the sandbox fetch reject with the message of a throwing outbound function', async () => {
    const outcome = await run({
      code: 'async () => { try { await fetch("https://example.test/") } catch (e) { return e.message } }',
      outbound: () => {
        throw new Error('no network today');
      },
    });
    expect(outcome.result).toBe('no network today');
  });

  it('rejects an outbound that is neither a function, null nor undefined', async () => {
    await expect(run({ code: 'async () => 1', outbound: 'yes' as never })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });
});

describe('retained handles', () => {
  it('replaces returned functions with handles and calls them in the retained isolate', async () => {
    const calls: unknown[][] = [];
    const dispatch = dispatchFor({
      api: (tool, args) => {
        calls.push([tool, ...args]);
        return args.length;
      },
    });
    const executed = await run({
      code: `async () => { let count = 0; return { bump: (by) => { count += by; console.warn('bumped', count); return count }, ask: async (x) => api.size(x, x), label: 'counter' } }`,
      providers: [{ name: 'api', tools: ['size'] }],
      dispatch,
      retainHandles: true,
    });
    expect(typeof executed.executionId).toBe('string');
    const value = executed.result as Record<string, Record<string, string>>;
    expect(value.label).toBe('counter');
    const bump = value.bump![HANDLE_KEY]!;
    const ask = value.ask![HANDLE_KEY]!;
    expect(typeof bump).toBe('string');
    const executionId = executed.executionId!;

    expect(await executor.invokeHandle({ executionId, handle: bump, args: [2] })).toEqual({
      result: 2,
      logs: [{ level: 'warn', message: 'bumped 2' }],
      executionId,
    });
    expect((await executor.invokeHandle({ executionId, handle: bump, args: [3] })).result).toBe(5);
    expect((await executor.invokeHandle({ executionId, handle: ask, args: ['q'], dispatch })).result).toBe(2);
    expect(calls).toEqual([['size', 'q', 'q']]);

    await expect(executor.invokeHandle({ executionId, handle: 'no-such-handle' })).rejects.toMatchObject({
      code: 'HANDLE_NOT_FOUND',
      message: isolateText.handleNotFound(executionId, 'no-such-handle'),
    });
    await executor.closeHandles(executionId);
    await expect(executor.invokeHandle({ executionId, handle: bump })).rejects.toMatchObject({
      code: 'HANDLE_NOT_FOUND',
      message: isolateText.executionClosed(executionId),
    });
    expect(executor.stats().retained).toBe(0);
  });

  it('rejects an unknown execution id with HANDLE_NOT_FOUND and ignores closing it', async () => {
    const failure = await executor
      .invokeHandle({ executionId: 'never-issued', handle: '1' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExecutorError);
    expect(failure).toMatchObject({ code: 'HANDLE_NOT_FOUND', message: isolateText.executionNotFound('never-issued') });
    await expect(executor.closeHandles('never-issued')).resolves.toBeUndefined();
  });

  it('returns no execution id when retainHandles is not set', async () => {
    const outcome = await run({ code: 'async () => 1' });
    expect(outcome).not.toHaveProperty('executionId');
  });
});

describe('request validation', () => {
  const invalid: [string, ExecuteRequest, string][] = [
    [
      'a timeout above maxTimeout',
      { code: 'async () => 1', timeout: 10_000_000 },
      isolateText.timeoutAboveMax('request.timeout', 10_000_000, 300_000),
    ],
    ['a negative timeout', { code: 'async () => 1', timeout: -1 }, isolateText.timeoutInvalid('request.timeout', '-1')],
    [
      'a NaN timeout',
      { code: 'async () => 1', timeout: Number.NaN },
      isolateText.timeoutInvalid('request.timeout', 'NaN'),
    ],
    [
      'a string timeout',
      { code: 'async () => 1', timeout: '5' as never },
      isolateText.timeoutInvalid('request.timeout', '"5"'),
    ],
    ['code that is not a string', { code: 42 as never }, isolateText.codeNotString('42')],
    [
      'providers without a dispatch',
      { code: 'async () => 1', providers: [{ name: 'api', tools: [] }] },
      isolateText.dispatchMissing('api'),
    ],
  ];
  for (const [what, request, message] of invalid) {
    it(`rejects ${what} with INVALID_REQUEST`, async () => {
      await expect(run(request)).rejects.toMatchObject({ code: 'INVALID_REQUEST', message });
    });
  }
});
