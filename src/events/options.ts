/**
 * The event options of one call (`onEvent`, `maxQueuedEvents`), one row each
 * (src/protocol/option-schema.ts), checked before the run starts so a wrong one costs no sandbox.
 * They are call options: of `CodemodeExecutor.execute`, and of a native executor's `execute` and
 * `invokeHandle` (`ExecutorCallOptions`). Runtime-neutral.
 */
import { describeValue } from '../protocol/describe-value.js';
import { ExecutorError } from '../protocol/errors.js';
import { meetsBounds, type OptionRow } from '../protocol/option-schema.js';
import type { ExecutorCallOptions, OnRunEvent } from '../protocol/types.js';
import { formatEventOptionInvalid, formatQueueWithoutCallback } from './texts.js';

/** How many events may wait for a callback that has fallen behind, by default. */
export const DEFAULT_MAX_QUEUED_EVENTS = 1000;
/** The most a call may ask to queue: the queue lives in the caller's memory and, over the daemon, in the daemon's. */
const MAX_QUEUED_EVENTS = 100_000;

/** The event options a call takes (`ExecutorCallOptions` declares them). */
export type EventCallOptions = Pick<ExecutorCallOptions, 'onEvent' | 'maxQueuedEvents'>;

export const EVENT_ROWS = {
  onEvent: {
    type: 'function',
    rule: 'a function (event) => void, or undefined',
    description:
      "receives the run's events as they happen: `console`, `tool-call`, `tool-result`, `fetch`, and `end` last",
  },
  maxQueuedEvents: {
    type: 'integer',
    unit: 'count',
    bounds: { kind: 'integer', min: 1, max: MAX_QUEUED_EVENTS },
    default: DEFAULT_MAX_QUEUED_EVENTS,
    rule: `an integer from 1 to ${MAX_QUEUED_EVENTS}, or undefined (${DEFAULT_MAX_QUEUED_EVENTS})`,
    description:
      'how many events may wait while `onEvent` works on an earlier one (a promise it returned); past it events are dropped, and `end` counts them',
  },
} as const satisfies Record<keyof EventCallOptions, OptionRow>;

export interface ResolvedEventOptions {
  onEvent: OnRunEvent;
  maxQueuedEvents: number;
}

/**
 * The call's event options: `null` when it has no `onEvent` (nothing is observed, and nothing
 * costs). Throws `ExecutorError` `INVALID_REQUEST` naming a wrong one. `options` is the call's
 * options object as given; anything else is left to the caller's own checks.
 */
export function resolveEventOptions(method: string, options: unknown): ResolvedEventOptions | null {
  if (typeof options !== 'object' || options === null) return null;
  const { onEvent, maxQueuedEvents } = options as EventCallOptions;
  if (onEvent === undefined && maxQueuedEvents === undefined) return null;
  if (onEvent !== undefined && typeof onEvent !== 'function')
    throw invalid(method, 'onEvent', EVENT_ROWS.onEvent.rule, onEvent);
  if (maxQueuedEvents !== undefined && !meetsBounds(EVENT_ROWS.maxQueuedEvents.bounds, maxQueuedEvents))
    throw invalid(method, 'maxQueuedEvents', EVENT_ROWS.maxQueuedEvents.rule, maxQueuedEvents);
  if (onEvent === undefined) throw new ExecutorError('INVALID_REQUEST', formatQueueWithoutCallback(method));
  return { onEvent, maxQueuedEvents: maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS };
}

function invalid(method: string, name: string, rule: string, value: unknown): ExecutorError {
  return new ExecutorError('INVALID_REQUEST', formatEventOptionInvalid(method, name, rule, describeValue(value)));
}
