/**
 * The options of `replay(record, options)`, one row each (src/protocol/option-schema.ts), checked
 * before anything runs, as record options are: an unknown name gets the project's did-you-mean.
 */
import * as v from 'valibot';
import { describeValue } from '../protocol/describe-value.js';
import { invalidRequest } from '../protocol/errors.js';
import {
  functionValue,
  type OptionTexts,
  option,
  optionsSchema,
  parseOptions,
  requiredOption,
  rowsOf,
} from '../protocol/parse-options.js';
import { REQUEST_FIELDS, TIMEOUT_BOUNDS, TIMEOUT_RULE } from '../protocol/request-schema.js';
import type { Executor, OutboundFetch } from '../protocol/types.js';
import {
  formatReplayOptionInvalid,
  formatReplayOptionsInvalid,
  formatReplayOptionUnknown,
  REPLAY_NEEDS_EXECUTOR,
} from './texts.js';

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

/** A dialect executor, which replay unwraps to the native one it wraps. */
type DialectExecutor = { execute(...args: never[]): unknown; dispose(): Promise<void> };

const REPLAY_SCHEMA = optionsSchema(
  {
    /**
     * What runs the code again: a native executor (an `IsolateExecutor`, `connect()`'s, any), or a
     * `CodemodeExecutor`, which replays on the native executor it wraps.
     */
    executor: requiredOption(
      v.custom<Executor | DialectExecutor>((value) => value !== undefined),
      {
        type: 'object',
        rule: 'a native executor (new IsolateExecutor() from /isolate, the executor connect() returns) or a CodemodeExecutor',
        description:
          'what runs the code again; a `CodemodeExecutor` replays on the native executor it wraps, since the record holds the native request',
      },
    ),
    /** Answers the replayed run's `fetch`; fetches are not recorded. Left out, the executor's default applies. */
    outbound: option(v.nullable(functionValue<OutboundFetch>()), {
      type: 'function',
      rule: 'a function (request) => Response, null, or undefined',
      description:
        "answers the replayed run's `fetch` (fetches are not recorded); left out, the executor's default applies",
    }),
    /** Replaces the recorded wall-clock bound, e.g. for a slower machine; replay waits this long plus a slack at most. */
    timeout: option(REQUEST_FIELDS.timeout, {
      type: 'number',
      unit: 'ms',
      unitExempt: "the native request's `timeout` field, whose value it replaces",
      bounds: TIMEOUT_BOUNDS,
      defaultText: "the record's",
      rule: TIMEOUT_RULE,
      description: `replaces the recorded bound, e.g. for a slower machine. Replay waits at most this bound (the record's, else ${DEFAULT_REPLAY_BOUND_MS / 1000} s) plus ${REPLAY_BOUND_SLACK_MS / 1000} s, host waits included, then gives the run up`,
    }),
    /** Aborting it gives the replay up: the run ends and `replay` rejects with `EXECUTION_CANCELLED`. */
    signal: option(v.instance(AbortSignal), {
      type: 'object',
      rule: 'an AbortSignal or undefined',
      description:
        'aborting it gives the replay up: the run ends, its sandbox is released, and `replay` rejects with `EXECUTION_CANCELLED`',
    }),
  },
  { arrays: false },
);

/** What `replay` runs the record on, and with what. */
export type ReplayOptions = v.InferInput<typeof REPLAY_SCHEMA>;

export const REPLAY_ROWS = rowsOf(REPLAY_SCHEMA);

/** Replay options, checked, with the dialect executor unwrapped to its native one. */
export interface ResolvedReplayOptions {
  executor: Executor;
  outbound: OutboundFetch | null | undefined;
  timeout: number | null | undefined;
  signal: AbortSignal | undefined;
}

const REPLAY_TEXTS: OptionTexts = {
  notObject: (value) =>
    value === undefined ? REPLAY_NEEDS_EXECUTOR : formatReplayOptionsInvalid(describeValue(value)),
  unknown: formatReplayOptionUnknown,
  invalid: (name, rule, value) =>
    name === 'executor' && value === undefined
      ? REPLAY_NEEDS_EXECUTOR
      : formatReplayOptionInvalid(name, rule, describeValue(value)),
};

/**
 * `replay`'s options, checked. `nativeOf` finds the native executor a dialect executor wraps (the
 * record holds the native request, which the dialect's `execute(code, providers)` cannot take).
 */
export function resolveReplayOptions(
  value: unknown,
  nativeOf: (executor: unknown) => Executor | undefined,
): ResolvedReplayOptions {
  const { executor, outbound, timeout, signal } = parseOptions(REPLAY_SCHEMA, value, REPLAY_TEXTS, invalidRequest);
  const native = nativeOf(executor) ?? (executor as Executor);
  if (typeof native?.execute !== 'function' || typeof native.dispose !== 'function')
    throw invalidRequest(REPLAY_TEXTS.invalid('executor', REPLAY_SCHEMA.options.executor.row.rule, executor));
  return { executor: native, outbound, timeout, signal };
}
