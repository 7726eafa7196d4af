/**
 * The options of `replay(record, options)`, one row each (src/protocol/option-schema.ts), checked
 * before anything runs, as record options are: an unknown name gets the project's did-you-mean.
 */
import { describeValue } from '../protocol/describe-value.js';
import { ExecutorError } from '../protocol/errors.js';
import { meetsBounds, nearestOption, type OptionRow } from '../protocol/option-schema.js';
import type { Executor, OutboundFetch } from '../protocol/types.js';
import {
  formatReplayOptionInvalid,
  formatReplayOptionsInvalid,
  formatReplayOptionUnknown,
  REPLAY_NEEDS_EXECUTOR,
} from './texts.js';
import type { ReplayOptions } from './types.js';

/**
 * How long `replay` waits for a run whose bound it cannot read (the record's `timeout` is `null` or
 * absent, and `options.timeout` is not given) before it gives the run up.
 */
export const DEFAULT_REPLAY_BOUND_MS = 60_000;

/**
 * What `replay` adds to the run's bound before it gives the run up itself: the executor's own
 * timeout, at the bound, ends an ordinary run first and keeps its text, a loaded machine's start included.
 */
export const REPLAY_BOUND_SLACK_MS = 5_000;

export const REPLAY_ROWS = {
  executor: {
    type: 'object',
    rule: 'a native executor (new IsolateExecutor() from /isolate, the executor connect() returns) or a CodemodeExecutor',
    description:
      'what runs the code again; a `CodemodeExecutor` replays on the native executor it wraps, since the record holds the native request',
  },
  outbound: {
    type: 'function',
    rule: 'a function (request) => Response, null, or undefined',
    description:
      "answers the replayed run's `fetch` (fetches are not recorded); left out, the executor's default applies",
  },
  timeout: {
    type: 'number',
    unit: 'ms',
    unitExempt: "the native request's `timeout` field, whose value it replaces",
    bounds: { kind: 'atLeast', min: 0 },
    defaultText: "the record's",
    rule: 'a number of milliseconds >= 0, null, or undefined',
    description: `replaces the recorded bound, e.g. for a slower machine. Replay waits at most this bound (the record's, else ${DEFAULT_REPLAY_BOUND_MS / 1000} s) plus ${REPLAY_BOUND_SLACK_MS / 1000} s, host waits included, then gives the run up`,
  },
  signal: {
    type: 'object',
    rule: 'an AbortSignal or undefined',
    description:
      'aborting it gives the replay up: the run ends, its sandbox is released, and `replay` rejects with `EXECUTION_CANCELLED`',
  },
} as const satisfies Record<keyof ReplayOptions, OptionRow>;

const OPTION_NAMES = Object.keys(REPLAY_ROWS);

/** Replay options, checked, with the dialect executor unwrapped to its native one. */
export interface ResolvedReplayOptions {
  executor: Executor;
  outbound: OutboundFetch | null | undefined;
  timeout: number | null | undefined;
  signal: AbortSignal | undefined;
}

function invalid(text: string): ExecutorError {
  return new ExecutorError('INVALID_REQUEST', text);
}

/**
 * `replay`'s options, checked. `nativeOf` finds the native executor a dialect executor wraps (the
 * record holds the native request, which the dialect's `execute(code, providers)` cannot take).
 */
export function resolveReplayOptions(
  value: unknown,
  nativeOf: (executor: unknown) => Executor | undefined,
): ResolvedReplayOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(value === undefined ? REPLAY_NEEDS_EXECUTOR : formatReplayOptionsInvalid(describeValue(value)));
  for (const name of Object.keys(value)) {
    if (!OPTION_NAMES.includes(name))
      throw invalid(formatReplayOptionUnknown(name, OPTION_NAMES, nearestOption(name, OPTION_NAMES)));
  }
  const { executor, outbound, timeout, signal } = value as ReplayOptions;
  if (executor === undefined) throw invalid(REPLAY_NEEDS_EXECUTOR);
  const native = nativeOf(executor) ?? (executor as Executor);
  if (typeof native?.execute !== 'function' || typeof native.dispose !== 'function')
    throw invalid(formatReplayOptionInvalid('executor', REPLAY_ROWS.executor.rule, describeValue(executor)));
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function')
    throw invalid(formatReplayOptionInvalid('outbound', REPLAY_ROWS.outbound.rule, describeValue(outbound)));
  if (timeout !== undefined && timeout !== null && !meetsBounds(REPLAY_ROWS.timeout.bounds, timeout))
    throw invalid(formatReplayOptionInvalid('timeout', REPLAY_ROWS.timeout.rule, describeValue(timeout)));
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw invalid(formatReplayOptionInvalid('signal', REPLAY_ROWS.signal.rule, describeValue(signal)));
  return { executor: native, outbound, timeout, signal };
}
