/**
 * The event options of one call (`onEvent`, `maxQueuedEvents`), one row each
 * (src/protocol/option-schema.ts), checked before the run starts so a wrong one costs no sandbox.
 * They are call options: of `CodemodeExecutor.execute`, and of a native executor's `execute` and
 * `invokeHandle` (`ExecutorCallOptions`). Runtime-neutral.
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
  rowsOf,
} from '../protocol/parse-options.js';
import type { ExecutorCallOptions, OnRunEvent } from '../protocol/types.js';
import { formatEventOptionInvalid, formatQueueWithoutCallback } from './texts.js';

/** How many events may wait for a callback that has fallen behind, by default. */
export const DEFAULT_MAX_QUEUED_EVENTS = 1000;
/** The most a call may ask to queue: the queue lives in the caller's memory and, over the daemon, in the daemon's. */
const MAX_QUEUED_EVENTS = 100_000;

/** The event options a call takes (`ExecutorCallOptions` declares them). */
type EventCallOptions = Pick<ExecutorCallOptions, 'onEvent' | 'maxQueuedEvents'>;

/** The call's event options, a slice of its options: the others are the call's own checks'. */
const EVENT_SCHEMA = optionsSchema(
  {
    onEvent: option(functionValue<OnRunEvent>(), {
      type: 'function',
      rule: 'a function (event) => void, or undefined',
      description:
        "receives the run's events as they happen: `console`, `tool-call`, `tool-result`, `fetch`, and `end` last",
    }),
    maxQueuedEvents: option(v.number(), {
      type: 'integer',
      unit: 'count',
      bounds: { kind: 'integer', min: 1, max: MAX_QUEUED_EVENTS },
      default: DEFAULT_MAX_QUEUED_EVENTS,
      rule: `an integer from 1 to ${MAX_QUEUED_EVENTS}, or undefined (${DEFAULT_MAX_QUEUED_EVENTS})`,
      description:
        'how many events may wait while `onEvent` works on an earlier one (a promise it returned); past it events are dropped, and `end` counts them',
    }),
  },
  { others: 'ignored' },
);

export const EVENT_ROWS = rowsOf(EVENT_SCHEMA);

/** Each method's words for a refusal, made once: a texts object made per call costs the call microseconds. */
const TEXTS_BY_METHOD = new Map<string, OptionTexts>();

function textsOf(method: string): OptionTexts {
  let texts = TEXTS_BY_METHOD.get(method);
  if (texts === undefined) {
    texts = {
      // Not reached: anything but an object has no event options, and other keys are not these options'.
      notObject: () => '',
      unknown: () => '',
      invalid: (name, rule, value) => formatEventOptionInvalid(method, name, rule, describeValue(value)),
    };
    TEXTS_BY_METHOD.set(method, texts);
  }
  return texts;
}

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
  const given = options as EventCallOptions;
  if (given.onEvent === undefined && given.maxQueuedEvents === undefined) return null;
  const { onEvent, maxQueuedEvents } = parseOptions(EVENT_SCHEMA, options, textsOf(method), invalidRequest);
  if (onEvent === undefined) throw invalidRequest(formatQueueWithoutCallback(method));
  return { onEvent, maxQueuedEvents };
}
