/** docs/dialect.md's log prefix table and the rendering of a timed-out run. */
import { describe, expect, it } from 'vitest';
import { formatLogs, renderError } from '../../src/codemode/codemode-executor.js';
import { ExecutionTimeoutError } from '../../src/protocol/errors.js';

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
  it.each([1, 50, 60_000])('renders the native timeout at a %i ms bound as Execution timed out', (bound) => {
    const native = ExecutionTimeoutError.format(bound);
    expect(native).toBe(
      `Execution timed out at its ${bound} ms bound. Do less work per run and return the part that is already finished.`,
    );
    expect(renderError(native)).toBe('Execution timed out');
  });

  it.each([
    'Execution timed out waiting for the vendor API',
    'Execution timed out at its 50 ms bound',
    'Execution timed out at its fifty ms bound. Do less work.',
    'Upstream: Execution timed out at its 50 ms bound. Do less work per run.',
    'Tool "x" not found',
    '',
  ])('passes %j through', (message) => {
    expect(renderError(message)).toBe(message);
  });
});
