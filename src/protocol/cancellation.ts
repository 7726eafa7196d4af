/**
 * The per-call `signal` of `execute` and `invokeHandle` (`ExecutorCallOptions`): its validation,
 * the error a call rejects with once it is aborted, and the race that rejects it at once. Every
 * executor that honours the signal (IsolateExecutor, RemoteExecutor) uses these, so the texts read
 * the same wherever the run was. Runtime-neutral.
 */
import { describeValue } from './describe-value.js';
import { ExecutorError } from './errors.js';
import { cancellationText } from './texts.js';

export type CancellableMethod = 'execute' | 'invokeHandle';

/** What a call aborted through its signal rejects with. */
export function cancellationError(method: CancellableMethod, signal: AbortSignal): ExecutorError {
  return new ExecutorError('EXECUTION_CANCELLED', cancellationText.cancelled(method), { cause: signal.reason });
}

/** Duck-typed, so a signal from another realm (or a polyfill) is accepted too. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return (
    typeof candidate.aborted === 'boolean' &&
    typeof candidate.addEventListener === 'function' &&
    typeof candidate.removeEventListener === 'function'
  );
}

/** The call's signal, if any; a malformed `options` is an `INVALID_REQUEST`. */
export function readSignal(method: CancellableMethod, options: unknown): AbortSignal | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw new ExecutorError('INVALID_REQUEST', cancellationText.callOptionsInvalid(method, describeValue(options)));
  }
  const { signal } = options as { signal?: unknown };
  if (signal === undefined) return undefined;
  if (!isAbortSignal(signal))
    throw new ExecutorError('INVALID_REQUEST', cancellationText.signalInvalid(method, describeValue(signal)));
  return signal;
}

/**
 * Runs `work` until the signal aborts: then `onAbort` starts ending it and the call rejects at once,
 * while `work` carries on to its own end (whose outcome is then dropped).
 */
export function untilAborted<T>(
  method: CancellableMethod,
  signal: AbortSignal | undefined,
  work: Promise<T>,
  onAbort: () => void,
): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(cancellationError(method, signal));
    };
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
