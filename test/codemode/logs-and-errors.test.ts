/** docs/dialect.md's log prefix table and the rendering of a timed-out run. */
import { describe, expect, it } from 'vitest';
import { CodemodeExecutor, formatLogs, renderError } from '../../src/codemode/codemode-executor.js';
import { ExecutionTimeoutError } from '../../src/protocol/errors.js';
import { formatCpuTimeout } from '../../src/protocol/texts.js';
import type { Executor } from '../../src/protocol/types.js';

describe('formatLogs', () => {
  it.each([
    ['log', 'hello', 'hello'],
    ['warn', 'late', '[warn] late'],
    ['error', 'bad', '[error] bad'],
    ['warn', '', '[warn] '],
  ] as const)('%s %j renders as %j', (level, message, line) => {
    expect(formatLogs([{ level, message }])).toEqual([line]);
  });

  it('keeps the order of the entries', () => {
    expect(
      formatLogs([
        { level: 'error', message: 'e' },
        { level: 'log', message: 'l' },
        { level: 'warn', message: 'w' },
      ]),
    ).toEqual(['[error] e', 'l', '[warn] w']);
  });
});

describe('renderError', () => {
  it.each([1, 50, 60_000])('renders a run ended at its %i ms bound as Execution timed out', (bound) => {
    const native = ExecutionTimeoutError.format(bound);
    expect(native).toBe(
      `Execution timed out at its ${bound} ms bound. Do less work per run and return the part that is already finished.`,
    );
    expect(renderError(native, { code: 'EXECUTION_TIMEOUT', timeout: bound })).toBe('Execution timed out');
  });

  it.each([
    'Execution timed out waiting for the vendor API',
    'Execution timed out at its 50 ms bound',
    'Upstream: Execution timed out at its 50 ms bound. Do less work per run.',
    // The whole native text, but written by the program: the text alone is never read as an ending.
    ExecutionTimeoutError.format(50),
    'Tool "x" not found',
    '',
  ])('passes %j through when the executor did not end the run', (message) => {
    expect(renderError(message, undefined)).toBe(message);
  });

  it("passes every other ending's text through, the CPU bound's included", () => {
    const text = formatCpuTimeout(30);
    expect(renderError(text, { code: 'CPU_TIMEOUT', cpuTimeout: 30 })).toBe(text);
    expect(renderError('memory', { code: 'MEMORY_LIMIT', memoryLimitMb: 128 })).toBe('memory');
  });

  it("recognizes the native timeout's text from an executor that does not report endings, as before them", () => {
    const native = ExecutionTimeoutError.format(50);
    expect(renderError(native, undefined, false)).toBe('Execution timed out');
    // Its other texts, and a text that only begins alike, still pass through.
    expect(renderError('Execution timed out waiting for the vendor API', undefined, false)).toBe(
      'Execution timed out waiting for the vendor API',
    );
    expect(renderError(formatCpuTimeout(30), undefined, false)).toBe(formatCpuTimeout(30));
  });
});

describe('CodemodeExecutor over a native executor', () => {
  /** A native executor that answers every run with this failure text, and reports endings or not. */
  function failingNative(error: string, reportsEndings: boolean): Executor {
    const native: Executor = {
      execute: async () => ({ result: undefined, error, logs: [] }),
      invokeHandle: async () => ({ result: undefined, logs: [] }),
      closeHandles: async () => {},
      dispose: async () => {},
    };
    return reportsEndings ? Object.assign(native, { reportsEndings: true as const }) : native;
  }

  it('written before endings, still has its timeout rendered as the dialect reports it', async () => {
    const executor = new CodemodeExecutor(failingNative(ExecutionTimeoutError.format(50), false));
    expect(await executor.execute('async () => 1', [])).toMatchObject({ error: 'Execution timed out' });
  });

  it('that reports endings, has the same text without an ending passed through as the program wrote it', async () => {
    const text = ExecutionTimeoutError.format(50);
    const executor = new CodemodeExecutor(failingNative(text, true));
    expect(await executor.execute('async () => 1', [])).toMatchObject({ error: text });
  });
});
