/**
 * CodemodeExecutor end to end over a native executor that really runs the code (node:vm) and
 * really calls request.dispatch with codec-encoded argument arrays.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { normalizeCode } from '../../src/codemode/normalize.js';
import { CODEMODE_ROWS } from '../../src/codemode/options.js';
import type { ExecuteRequest, Executor } from '../../src/protocol/types.js';
import { VmExecutor } from './support/vm-executor.js';

const DEPRECATION =
  '[@supolka/cloudflare-codemode-executor] Passing a bare functions record to execute() is deprecated. Pass an array of providers instead.';

function setup(options: { defaultTimeout?: number } = {}) {
  const native = new VmExecutor(options);
  return { native, executor: new CodemodeExecutor(native) };
}

function onlyRequest(native: VmExecutor): ExecuteRequest {
  expect(native.requests).toHaveLength(1);
  return native.requests[0]!;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the call through CodemodeExecutor', () => {
  it('runs normalized model output and returns {result, logs}', async () => {
    const { native, executor } = setup();
    expect(await executor.execute('const answer = 6 * 7\nanswer', [])).toEqual({ result: 42, logs: [] });
    expect(await executor.execute('return 6 * 7', [])).toEqual({ result: 42, logs: [] });
    expect(await executor.execute('```js\nconsole.warn("late")\n```', [])).toEqual({
      result: undefined,
      logs: ['[warn] late'],
    });
    expect(native.requests.map((request) => request.code)).toEqual([
      'async () => {\nconst answer = 6 * 7\nreturn (answer)\n}',
      'async () => {\nreturn 6 * 7\n}',
      'async () => {\nreturn (console.warn("late"))\n}',
    ]);
  });

  it('sends normalizeCode(code), countHostWaits true, and a dispatch even with no providers', async () => {
    const { native, executor } = setup();
    await executor.execute('1 + 2', []);
    const request = onlyRequest(native);
    expect(request.code).toBe(normalizeCode('1 + 2'));
    expect(request.countHostWaits).toBe(true);
    expect(typeof request.dispatch).toBe('function');
    expect(request.providers).toEqual([]);
  });

  it('runs an arrow that ends in a line comment', async () => {
    const { executor } = setup();
    expect(await executor.execute('async () => 41 + 1 // the answer', [])).toEqual({ result: 42, logs: [] });
  });

  it('sets countHostWaits true with providers and connectors too', async () => {
    const { native, executor } = setup();
    await executor.execute('async () => 1', [{ name: 'a', fns: {} }], {
      connectors: [{ name: 'c', binding: { callTool: () => 1 } }],
    });
    expect(onlyRequest(native).countHostWaits).toBe(true);
  });
});

describe('the bare record', () => {
  /**
   * The deprecation line is printed once per process, so each test reads a fresh copy of the
   * module: one that has not printed it yet.
   */
  async function freshSetup() {
    vi.resetModules();
    const { CodemodeExecutor: Fresh } = await import('../../src/codemode/codemode-executor.js');
    const native = new VmExecutor();
    return { native, executor: new Fresh(native), Fresh };
  }

  it('writes the deprecation line once per process, whichever executor takes the record, and binds it as codemode', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { native, executor, Fresh } = await freshSetup();
    const fns = { add: (a: number, b: number) => a + b };
    expect(await executor.execute('async () => codemode.add(20, 22)', fns)).toEqual({ result: 42, logs: [] });
    expect(await executor.execute('async () => codemode.add(1, 1)', fns)).toEqual({ result: 2, logs: [] });
    expect(await new Fresh(new VmExecutor()).execute('async () => codemode.add(2, 2)', fns)).toEqual({
      result: 4,
      logs: [],
    });
    expect(warn.mock.calls).toEqual([[DEPRECATION]]);
    expect(native.requests[0]!.providers).toStrictEqual([{ name: 'codemode', tools: ['add'] }]);
  });

  it('does not warn for an array, even an empty one, and still warns on the first record after it', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { executor } = await freshSetup();
    await executor.execute('async () => 1', []);
    expect(warn).not.toHaveBeenCalled();
    await executor.execute('async () => 1', {});
    expect(warn.mock.calls).toEqual([[DEPRECATION]]);
  });

  it('rejects a missing record with a TypeError naming it, after the warning (upstream rejects too)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { native, executor } = await freshSetup();
    const call = executor.execute('async () => 1', undefined as unknown as Record<string, never>);
    await expect(call).rejects.toThrow(
      new TypeError('Provider "codemode" (index 0) has no record of functions: fns is undefined'),
    );
    expect(warn).toHaveBeenCalledTimes(1);
    expect(native.requests).toHaveLength(0);
  });
});

describe('validation ends the call before the native executor', () => {
  const refused: [
    string,
    Parameters<CodemodeExecutor['execute']>[1],
    Parameters<CodemodeExecutor['execute']>[2],
    string,
  ][] = [
    ['reserved provider', [{ name: 'Promise', fns: {} }], undefined, 'Provider name "Promise" is reserved'],
    [
      'dialect-reserved provider',
      [{ name: '__dispatchers', fns: {} }],
      undefined,
      'Provider name "__dispatchers" is reserved',
    ],
    [
      'invalid connector',
      [],
      { connectors: [{ name: 'my-api', binding: { callTool: () => 1 } }] },
      'Connector name "my-api" is not a valid JavaScript identifier',
    ],
    ['reserved word', [{ name: 'class', fns: {} }], undefined, 'Provider name "class" is a JavaScript reserved word'],
    [
      'duplicate provider',
      [
        { name: 'dup', fns: {} },
        { name: 'dup', fns: {} },
      ],
      undefined,
      'Duplicate provider name "dup"',
    ],
    [
      'connector clash',
      [{ name: 'api', fns: {} }],
      { connectors: [{ name: 'api', binding: { callTool: () => 1 } }] },
      'Duplicate name "api" (connector clashes with provider)',
    ],
    [
      'sanitize collision',
      [{ name: 'gh', fns: { 'list-issues': () => 1, 'list.issues': () => 2 } }],
      undefined,
      'Tool names "list-issues" and "list.issues" both sanitize to "list_issues" in provider "gh"',
    ],
  ];
  it.each(refused)('%s', async (_label, providers, options, error) => {
    const { native, executor } = setup();
    const outcome = await executor.execute('async () => 1', providers, options);
    expect(outcome).toStrictEqual({ result: undefined, error });
    expect(Object.keys(outcome)).toEqual(['result', 'error']);
    expect(native.requests).toHaveLength(0);
  });
});

describe('options reach the request only when set', () => {
  it('leaves modules, timeout, cpuTimeout and outbound off the request when the caller left them out', async () => {
    const { native, executor } = setup();
    await executor.execute('async () => 1', [], {});
    const request = onlyRequest(native);
    expect('modules' in request).toBe(false);
    expect('timeout' in request).toBe(false);
    expect('cpuTimeout' in request).toBe(false);
    expect('outbound' in request).toBe(false);
  });

  it('forwards each one unchanged, including null', async () => {
    const { native, executor } = setup();
    const modules = { 'lib.js': 'export const x = 1' };
    const outbound = () => new Response('ok');
    await executor.execute('async () => 1', [], { modules, timeout: null, outbound });
    await executor.execute('async () => 1', [], { timeout: 250, cpuTimeout: 40, outbound: null });
    const [first, second] = native.requests;
    expect(first!.modules).toBe(modules);
    expect(first!.timeout).toBeNull();
    expect(first!.outbound).toBe(outbound);
    expect('cpuTimeout' in first!).toBe(false);
    expect(second!.timeout).toBe(250);
    expect(second!.cpuTimeout).toBe(40);
    expect(second!.outbound).toBeNull();
    expect('modules' in second!).toBe(false);
  });
});

describe('descriptors', () => {
  it('describes a plain provider as {name, tools} alone, under sanitized tool names', async () => {
    const { native, executor } = setup();
    await executor.execute('async () => 1', [
      { name: 'gh', fns: { 'list-issues': () => [], 'search.code': () => [], delete: () => 0 } },
    ]);
    expect(onlyRequest(native).providers).toStrictEqual([
      { name: 'gh', tools: ['list_issues', 'search_code', 'delete_'] },
    ]);
  });

  it('copies positionalArgs, proxySource and prelude when defined, and describes a connector with no tools', async () => {
    const { native, executor } = setup();
    const proxySource = '(call) => ({ hello: () => call("hello") })';
    await executor.execute(
      'async () => 1',
      [
        { name: 'old', fns: { a: () => 1 }, positionalArgs: false },
        { name: 'own', fns: {}, proxySource, prelude: 'own.extra = 1' },
        { name: 'plain', fns: {}, prelude: undefined },
      ],
      { connectors: [{ name: 'crm', binding: { callTool: () => 1 } }] },
    );
    expect(onlyRequest(native).providers).toStrictEqual([
      { name: 'old', tools: ['a'], positionalArgs: false },
      { name: 'own', tools: [], proxySource, prelude: 'own.extra = 1' },
      { name: 'plain', tools: [] },
      { name: 'crm', tools: [] },
    ]);
  });
});

describe('tool calls', () => {
  it('calls a tool under its sanitized name with the spread argument array', async () => {
    const { native, executor } = setup();
    const seen: unknown[][] = [];
    const fns = { 'list-issues': (...args: unknown[]) => (seen.push(args), ['#1']) };
    const outcome = await executor.execute("async () => api.list_issues({ repo: 'x' }, 2)", [{ name: 'api', fns }]);
    expect(outcome).toEqual({ result: ['#1'], logs: [] });
    expect(seen).toEqual([[{ repo: 'x' }, 2]]);
    expect(native.calls[0]!.argsJson).toBe('[{"repo":"x"},2]');
  });

  it('turns down a call spelled the raw way', async () => {
    const { executor } = setup();
    const outcome = await executor.execute("async () => api['list-issues']({ repo: 'x' })", [
      { name: 'api', fns: { 'list-issues': () => 1 } },
    ]);
    expect(outcome).toEqual({ result: undefined, error: 'Tool "list-issues" not found', logs: [] });
  });

  it('turns down an Object.prototype member that is not a tool', async () => {
    const { executor } = setup();
    const outcome = await executor.execute('async () => api.toString()', [{ name: 'api', fns: { a: () => 1 } }]);
    expect(outcome.error).toBe('Tool "toString" not found');
  });

  it('reads an undeclared namespace like an undeclared tool', async () => {
    const { native, executor } = setup();
    const outcome = await executor.execute("async () => __dispatch('nowhere', 'anything', '[]')", [
      { name: 'api', fns: {} },
    ]);
    expect(outcome.result).toBe('{"error":"Tool \\"anything\\" not found"}');
    expect(native.calls[0]!.provider).toBe('nowhere');
  });

  it("surfaces a tool's own failure as the envelope error", async () => {
    const { executor } = setup();
    const fns = {
      fails: () => {
        throw new TypeError('bad input');
      },
    };
    const outcome = await executor.execute('async () => codemode.fails()', [{ name: 'codemode', fns }]);
    expect(outcome).toEqual({ result: undefined, error: 'bad input', logs: [] });
  });
});

describe('connectors', () => {
  function crm() {
    const received: [string, unknown][] = [];
    const binding = {
      callTool(method: string, args: unknown) {
        received.push([method, args]);
        if (method === 'approve') return { __codemode_control__: 'pause' };
        if (method === 'refuse') return Promise.resolve({ __codemode_control__: 'error', message: 'vendor said no' });
        if (method === 'refuseSilently') return { __codemode_control__: 'error' };
        return { method, args };
      },
    };
    return { received, connectors: [{ name: 'crm', binding }] };
  }

  it('passes the first argument only', async () => {
    const { executor } = setup();
    const { received, connectors } = crm();
    const outcome = await executor.execute("async () => crm.lookup({ id: 7 }, 'ignored')", [], { connectors });
    expect(outcome).toEqual({ result: { method: 'lookup', args: { id: 7 } }, logs: [] });
    expect(received).toEqual([['lookup', { id: 7 }]]);
  });

  it('turns the pause marker into __CODEMODE_PAUSE__', async () => {
    const { executor } = setup();
    const { connectors } = crm();
    expect(await executor.execute('async () => crm.approve({})', [], { connectors })).toEqual({
      result: undefined,
      error: '__CODEMODE_PAUSE__',
      logs: [],
    });
  });

  it("turns the error marker into its message, and a missing message into 'undefined'", async () => {
    const { executor } = setup();
    const { connectors } = crm();
    expect((await executor.execute('async () => crm.refuse({})', [], { connectors })).error).toBe('vendor said no');
    expect((await executor.execute('async () => crm.refuseSilently({})', [], { connectors })).error).toBe('undefined');
  });

  it('is caught by the program like any tool failure', async () => {
    const { executor } = setup();
    const { connectors } = crm();
    const code = 'async () => { try { await crm.approve({}) } catch (e) { return "caught " + e.message } }';
    expect(await executor.execute(code, [], { connectors })).toEqual({ result: 'caught __CODEMODE_PAUSE__', logs: [] });
  });
});

describe('the completion guard', () => {
  it('gives an abandoned call the completion text while the program gets its result', async () => {
    const { native, executor } = setup();
    const release = deferred();
    let slowRan = false;
    const fns = {
      slow: async () => {
        await release.promise;
        slowRan = true;
        return 'too late';
      },
      fast: async () => 'ready',
    };
    const outcome = await executor.execute('async () => { codemode.slow(); return await codemode.fast() }', [
      { name: 'codemode', fns },
    ]);
    expect(outcome).toEqual({ result: 'ready', logs: [] });
    release.resolve();
    await native.idle();
    expect(slowRan).toBe(true);
    const slow = native.calls.find((call) => call.tool === 'slow');
    expect(slow?.envelope).toBe('{"error":"Execution has already completed"}');
    expect(native.calls.find((call) => call.tool === 'fast')?.envelope).toBe('{"result":"ready"}');
  });

  it('refuses a call delivered after execute returned without running the host function', async () => {
    let captured: ExecuteRequest | undefined;
    const native: Executor = {
      execute: async (request) => {
        captured = request;
        return { result: 1, logs: [] };
      },
      invokeHandle: () => Promise.reject(new Error('unused')),
      closeHandles: async () => {},
      dispose: async () => {},
    };
    let notified = 0;
    const executor = new CodemodeExecutor(native);
    const fns = { notify: () => ++notified };
    expect(await executor.execute('async () => 1', [{ name: 'codemode', fns }])).toEqual({ result: 1, logs: [] });
    expect(await captured!.dispatch!('codemode', 'notify', '[]')).toBe('{"error":"Execution has already completed"}');
    expect(notified).toBe(0);
  });

  it('closes even when the native executor rejects, and the rejection reaches the host', async () => {
    let captured: ExecuteRequest | undefined;
    const failing: Executor = {
      execute: async (request) => {
        captured = request;
        throw new Error('native failure');
      },
      invokeHandle: () => Promise.reject(new Error('unused')),
      closeHandles: async () => {},
      dispose: async () => {},
    };
    const executor = new CodemodeExecutor(failing);
    await expect(executor.execute('async () => 1', [{ name: 'a', fns: { t: () => 1 } }])).rejects.toThrow(
      'native failure',
    );
    expect(await captured!.dispatch!('a', 't', '[]')).toBe('{"error":"Execution has already completed"}');
  });
});

describe('logs and errors on the way back', () => {
  it('prefixes warn and error lines and leaves log lines bare', async () => {
    const { executor } = setup();
    const code = 'async () => { console.log("a", 1); console.warn("late"); console.error("bad"); console.warn() }';
    expect((await executor.execute(code, [])).logs).toEqual(['a 1', '[warn] late', '[error] bad', '[warn] ']);
  });

  it('keeps the logs of a failed run', async () => {
    const { executor } = setup();
    const code = 'async () => { console.warn("before"); throw new Error("boom") }';
    expect(await executor.execute(code, [])).toEqual({ result: undefined, error: 'boom', logs: ['[warn] before'] });
  });

  it('renders a native timeout to Execution timed out', async () => {
    const { native, executor } = setup();
    const outcome = await executor.execute('async () => { await new Promise(() => {}) }', [], { timeout: 20 });
    expect(outcome).toEqual({ result: undefined, error: 'Execution timed out', logs: [] });
    expect(onlyRequest(native).timeout).toBe(20);
  });

  it("keeps a program's own message that merely opens like a timeout", async () => {
    const { executor } = setup();
    const code = 'async () => { throw new Error("Execution timed out waiting for the vendor API") }';
    expect((await executor.execute(code, [])).error).toBe('Execution timed out waiting for the vendor API');
  });
});

describe('dispose', () => {
  it('forwards to the native executor', async () => {
    const { native, executor } = setup();
    await executor.dispose();
    expect(native.disposeCalls).toBe(1);
  });
});

describe('the constructor options (src/codemode/options.ts)', () => {
  it('refuses an option it does not have, with the nearest one it has', () => {
    expect(() => new CodemodeExecutor(new VmExecutor(), { maxCodeByte: 10 } as never)).toThrow(
      new TypeError(
        'CodemodeExecutor has no option "maxCodeByte" (did you mean maxCodeBytes?); the options are maxCodeBytes, normalizeCacheChars, tenant.',
      ),
    );
    expect(() => new CodemodeExecutor(new VmExecutor(), { timeout: 10 } as never)).toThrow(
      new TypeError(
        'CodemodeExecutor has no option "timeout"; the options are maxCodeBytes, normalizeCacheChars, tenant.',
      ),
    );
  });

  it("refuses a value its row does not take, in the row's words", () => {
    expect(() => new CodemodeExecutor(new VmExecutor(), { normalizeCacheChars: -1 })).toThrow(
      new TypeError(
        `CodemodeExecutor option normalizeCacheChars must be ${CODEMODE_ROWS.normalizeCacheChars.rule}, got -1.`,
      ),
    );
  });
});
