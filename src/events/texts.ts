/**
 * Every text of live events: a wrong event option, and the report of a callback that threw. One
 * place, so a reword is one edit.
 */

/** An event option with a value its rule does not take. */
export function formatEventOptionInvalid(method: string, name: string, rule: string, got: string): string {
  return `${method}() option ${name} must be ${rule}; got ${got}`;
}

/** `maxQueuedEvents` without `onEvent`: a bound on nothing is a mistake worth naming. */
export function formatQueueWithoutCallback(method: string): string {
  return `${method}() option maxQueuedEvents bounds the events queued for onEvent, and no onEvent was given`;
}

/** The host's `onEvent` threw or rejected: reported once per call, never the run's failure. */
export function formatOnEventFailed(message: string): string {
  return `onEvent threw (${message}); the run goes on, and later events of this call are still delivered`;
}

/** A `traceparent` call option that is no W3C traceparent. */
export function formatTraceparentInvalid(method: string, got: unknown): string {
  return `${method}() option traceparent must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), or undefined; got ${JSON.stringify(String(got)).slice(0, 80)}`;
}
