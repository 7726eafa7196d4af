/**
 * A call's `timeout` has one rule wherever it is given (src/protocol/request-schema.ts): each
 * checker takes and refuses the same values. A request's field in process (the executor's request
 * checks) and on the daemon's wire, and the defaults of it (IsolateExecutor's, connect()'s and
 * replay's options), against the rule. Before it was one, a default had to be above 0, connect()
 * took Infinity and the wire took any number.
 */
import { describe, expect, it } from 'vitest';
import { checkExecuteRequest } from '../../src/isolate/host/executor/requests.js';
import { resolveSettings } from '../../src/isolate/host/options/resolve.js';
import { formatTimeoutInvalid } from '../../src/protocol/texts.js';
import { resolveReplayOptions } from '../../src/record/replay-options.js';
import { resolveConnectOptions } from '../../src/remote/connect-options.js';
import { checkWireExecuteRequest } from '../../src/server/calls/wire-checks.js';

/** Each value, and whether the rule takes it: a finite number from 0, or null. */
const VALUES: [value: unknown, taken: boolean][] = [
  [0, true],
  [0.5, true],
  [60_000, true],
  [null, true],
  [-1, false],
  [-0.5, false],
  [Number.NaN, false],
  [Number.POSITIVE_INFINITY, false],
  ['5', false],
  [true, false],
  [{}, false],
];

function takes(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

const settings = resolveSettings({ maxTimeout: 120_000 });
const executor = { execute: async () => ({ logs: [] }), dispose: async () => {} };

const CHECKERS: [string, (timeout: unknown) => unknown][] = [
  ['a request, in process', (timeout) => checkExecuteRequest({ code: 'async () => 1', timeout }, settings)],
  [
    "a request, on the daemon's wire",
    (timeout) => checkWireExecuteRequest({ code: 'async () => 1', dispatch: null, outboundMode: 'default', timeout }),
  ],
  ["IsolateExecutor's default", (timeout) => resolveSettings({ timeout, maxTimeout: 120_000 })],
  ["connect()'s default", (timeout) => resolveConnectOptions({ timeout: timeout as never })],
  ["replay's bound", (timeout) => resolveReplayOptions({ executor, timeout: timeout as never }, () => undefined)],
];

describe('the timeout rule', () => {
  for (const [where, check] of CHECKERS) {
    it(`is the one ${where} holds to`, () => {
      const verdicts = VALUES.map(([value]) => [value, takes(() => check(value))]);
      expect(verdicts).toEqual(VALUES);
    });
  }

  it('is refused with the same text in process and on the wire', () => {
    const text = formatTimeoutInvalid('request.timeout', '-1');
    expect(() => checkExecuteRequest({ code: 'async () => 1', timeout: -1 }, settings)).toThrow(text);
    expect(() =>
      checkWireExecuteRequest({ code: 'async () => 1', dispatch: null, outboundMode: 'default', timeout: -1 }),
    ).toThrow(text);
  });

  it('makes a null default the maximum, as a null request field is', () => {
    expect(resolveSettings({ timeout: null, maxTimeout: 90_000 })).toMatchObject({
      timeout: 90_000,
      maxTimeout: 90_000,
    });
    expect(checkExecuteRequest({ code: 'async () => 1', timeout: 0 }, settings).timeout).toBe(0);
  });
});
