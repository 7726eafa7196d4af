/**
 * The fields of a call (`ExecuteRequest`, `InvokeHandleRequest`) as one schema, which every
 * checker of a call reads: the executor's request checks (src/isolate/host/executor/requests.ts),
 * the daemon's wire checks (src/server/calls/wire-checks.ts), and the defaults of them that
 * `IsolateExecutor`, `connect()`, `replay` and `CodemodeExecutor` take. Each checker says a breach
 * in its own words; the rule is this one. Runtime-neutral: the root entry reads it.
 *
 * `timeout` has one rule wherever it is given (docs/isolate.md, "Timeouts and the run clock"): a
 * finite number of milliseconds from 0, or `null` for the executor's `maxTimeout`; undefined takes
 * the default. Only the executor knows its `maxTimeout`, so only it bounds a number by it; the
 * dialect makes a negative number 0 first, as upstream's `setTimeout` does.
 */
import * as v from 'valibot';
import type { NumberBounds } from './option-schema.js';
import type { OutboundFetch } from './types.js';

/** The timeout rule in words, as an option's refusal says it. */
export const TIMEOUT_RULE = 'a number of milliseconds >= 0, null, or undefined';

/** The timeout rule's number, as an option's row (a daemon flag, a docs table) states it. */
export const TIMEOUT_BOUNDS: NumberBounds = { kind: 'atLeast', min: 0 };

/** Each field of a call, by the one rule every checker applies to it. */
export const REQUEST_FIELDS = {
  /** The wall-clock bound: see above. */
  timeout: v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0))),
  /** The CPU-time bound, in ms: a finite number above 0. */
  cpuTimeout: v.pipe(v.number(), v.finite(), v.gtValue(0)),
  countHostWaits: v.boolean(),
  retainHandles: v.boolean(),
  /** Answers the sandbox's fetches; null blocks them. */
  outbound: v.nullable(v.custom<OutboundFetch>((value) => typeof value === 'function')),
  /** Who the run is for (the tenant level's key). */
  tenant: v.pipe(v.string(), v.minLength(1)),
} as const;

type Field = keyof typeof REQUEST_FIELDS;

/** Whether `value`, given (not undefined), is what the call's field takes. */
export function meetsField<Name extends Field>(
  name: Name,
  value: unknown,
): value is v.InferOutput<(typeof REQUEST_FIELDS)[Name]> {
  return v.is(REQUEST_FIELDS[name], value);
}
