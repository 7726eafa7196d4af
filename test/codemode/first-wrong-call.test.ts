/**
 * A host's first wrong call meets a text that says what was expected: a constructor argument that
 * is no native executor is refused at construction, and an option name `execute()` does not know
 * is accepted but reported, once per name.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import type { Executor } from '../../src/protocol/types.js';
import { VmExecutor } from './support/vm-executor.js';

const EXPECTED =
  "a native executor: an object with execute(request) and dispose(), such as new IsolateExecutor() from '@supolka/cloudflare-codemode-executor/isolate' or await connect(url)";

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the constructor refuses what is no native executor', () => {
  it('refuses no argument at all', () => {
    expect(() => new (CodemodeExecutor as new (native?: Executor) => CodemodeExecutor)()).toThrow(
      new TypeError(`new CodemodeExecutor() takes ${EXPECTED}. Got undefined.`),
    );
  });

  it("refuses upstream's constructor options, and says where timeout goes now", () => {
    const options = { timeout: 30_000 } as unknown as Executor;
    expect(() => new CodemodeExecutor(options)).toThrow(
      new TypeError(
        `new CodemodeExecutor() takes ${EXPECTED}, not options (got an object with timeout). ` +
          'timeout goes to the native executor, new IsolateExecutor({ timeout }) or connect(url, { timeout }), ' +
          'or on each call, execute(code, providers, { timeout }); docs/moving-a-host.md says where the other options went.',
      ),
    );
    const loaderOptions = { loader: {}, globalOutbound: null } as unknown as Executor;
    expect(() => new CodemodeExecutor(loaderOptions)).toThrow(
      /not options \(got an object with loader, globalOutbound\)/,
    );
  });

  it('refuses an object without the methods it calls, naming what it got', () => {
    const halfExecutor = { execute: async () => ({ result: 1, logs: [] }) } as unknown as Executor;
    expect(() => new CodemodeExecutor(halfExecutor)).toThrow(
      new TypeError(`new CodemodeExecutor() takes ${EXPECTED}. Got an object.`),
    );
    expect(() => new CodemodeExecutor('ws://127.0.0.1:8787' as unknown as Executor)).toThrow(
      `Got "ws://127.0.0.1:8787".`,
    );
  });

  it('accepts a native executor', () => {
    expect(new CodemodeExecutor(new VmExecutor())).toBeInstanceOf(CodemodeExecutor);
  });
});

describe('an option name execute() does not know', () => {
  const KNOWN = 'connectors, modules, timeout, cpuTimeout, outbound, tenant, record, onEvent, maxQueuedEvents';

  it('is accepted, and reported once per name as a process warning listing the known ones', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const executor = new CodemodeExecutor(new VmExecutor());
    const unknown = { tiemout: 5, timeout: 1_000 } as Record<string, unknown>;
    expect(await executor.execute('6 * 7', [], unknown)).toEqual({ result: 42, logs: [] });
    expect(await executor.execute('6 * 7', [], unknown)).toEqual({ result: 42, logs: [] });
    expect(
      await executor.execute('1', [], { tiemout: 5, loader: {}, recrod: true } as Record<string, unknown>),
    ).toEqual({
      result: 1,
      logs: [],
    });
    expect(warnings.mock.calls).toEqual([
      [
        `[@supolka/cloudflare-codemode-executor] execute() ignores the option "tiemout" (did you mean timeout?): the options it knows are ${KNOWN}.`,
        'CodemodeExecutorWarning',
      ],
      [
        `[@supolka/cloudflare-codemode-executor] execute() ignores the option "loader": the options it knows are ${KNOWN}.`,
        'CodemodeExecutorWarning',
      ],
      [
        `[@supolka/cloudflare-codemode-executor] execute() ignores the option "recrod" (did you mean record?): the options it knows are ${KNOWN}.`,
        'CodemodeExecutorWarning',
      ],
    ]);
  });

  it('goes to console.warn where there is no process (a Worker)', async () => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const executor = new CodemodeExecutor(new VmExecutor());
    const nodeProcess = globalThis.process;
    let call: Promise<unknown>;
    // execute() checks its options before its first await, so the process is gone only that long.
    vi.stubGlobal('process', undefined);
    try {
      call = executor.execute('1', [], { retries: 3 } as Record<string, unknown>);
    } finally {
      vi.stubGlobal('process', nodeProcess);
      vi.unstubAllGlobals();
    }
    await call;
    expect(warned.mock.calls).toEqual([
      [
        `[@supolka/cloudflare-codemode-executor] execute() ignores the option "retries": the options it knows are ${KNOWN}.`,
      ],
    ]);
  });
});

describe('an unknown option name the host did not write itself', () => {
  it('is quoted and cut short, so a line break in it cannot start a log line of its own', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const executor = new CodemodeExecutor(new VmExecutor());
    const name = `x\nlevel=error ${'y'.repeat(60)}`;
    await executor.execute('1', [], { [name]: 1 } as Record<string, unknown>);
    // Its first 40 characters: "x", the line break, "level=error " and 26 of the y's.
    expect(warnings.mock.calls).toEqual([
      [
        `[@supolka/cloudflare-codemode-executor] execute() ignores the option "x\\nlevel=error ${'y'.repeat(26)}…": the options it knows are connectors, modules, timeout, cpuTimeout, outbound, tenant, record, onEvent, maxQueuedEvents.`,
        'CodemodeExecutorWarning',
      ],
    ]);
  });
});
