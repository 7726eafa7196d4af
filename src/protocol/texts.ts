/**
 * Every text the native contract composes: what a run reports (written for the model that reads
 * it), what a call is refused with, and the completion, cancellation and handle texts. The
 * executors, the adapter and the daemon use them from here, so a reword is one deliberate edit.
 */

/** The text a tool call gets once its execution has completed. */
export const COMPLETED_MESSAGE = 'Execution has already completed';

/** The text of a tool failure when neither the thrown value nor the failure of its conversion has a text form. */
export const UNPRINTABLE_THROW_MESSAGE = 'The tool threw a value that cannot be converted to text';

/** The text a tool call gets when no handler knows the tool, or the provider. */
export function formatToolNotFound(tool: string): string {
  return `Tool "${tool}" not found`;
}

/** The phrase a timed-out run's text opens with, and the whole text the dialect reports. */
export const TIMEOUT_MESSAGE = 'Execution timed out';

/** The first sentence of a timeout's text, naming its bound. */
function timeoutFirstSentence(bound: string): string {
  return `${TIMEOUT_MESSAGE} at its ${bound} ms bound.`;
}

/** A request's `timeout` that breaks the timeout rule (request-schema.ts), wherever it is checked. */
export function formatTimeoutInvalid(field: string, got: string): string {
  return `${field} must be a non-negative finite number of milliseconds, null (the executor's maxTimeout) or undefined (its default), got ${got}.`;
}

/** The native failure text of a run past its bound. */
export function formatTimeout(timeout: number): string {
  return `${timeoutFirstSentence(String(timeout))} Do less work per run and return the part that is already finished.`;
}

const BOUND_SLOT = '\u0000';
const [BEFORE_BOUND = '', AFTER_BOUND = ''] = timeoutFirstSentence(BOUND_SLOT).split(BOUND_SLOT);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The first sentence of `formatTimeout`'s text, made from the same words, and the bound it names
 * as `String` writes a number (`300`, `1.5`, `1e+21`).
 */
export const TIMEOUT_FIRST_SENTENCE = new RegExp(
  `^${escapeRegExp(BEFORE_BOUND)}(\\d+(?:\\.\\d+)?(?:e[+-]\\d+)?)${escapeRegExp(AFTER_BOUND)}(?:\\s|$)`,
);

/**
 * The failure text of a run that spent its CPU-time bound (`cpuTimeout`), written for the model
 * that reads it. It is not a timeout: the wall-clock bound may be far off.
 */
export function formatCpuTimeout(cpuTimeout: number): string {
  return `Execution used up its CPU time bound of ${cpuTimeout} ms (cpuTimeout). Compute less per run and return the part that is already finished.`;
}

/** The per-call `signal` of `execute` and `invokeHandle` (cancellation.ts). */
export const cancellationText = {
  /** The caller aborted `options.signal` (a daemon does when its client goes away). */
  cancelled: (method: string) =>
    `The ${method} call was cancelled through its abort signal before it settled. Its run is given up, and its sandbox process is released (killed if it was spinning).`,
  callOptionsInvalid: (method: string, got: string) =>
    `${method}(request, options): options must be an object or undefined, got ${got}.`,
  signalInvalid: (method: string, got: string) =>
    `${method}(request, options): options.signal must be an AbortSignal or undefined, got ${got}.`,
} as const;

/** The texts `validateProviders` composes. They are written for the model that reads them. */
export const providerRejection = {
  reserved: (name: string) =>
    `Provider name "${name}" is reserved: the sandbox scope already binds it. Choose another name.`,
  notIdentifier: (name: string) =>
    `Provider name "${name}" is not a valid JavaScript identifier: use ASCII letters, digits, _ and $, and do not start with a digit.`,
  reservedWord: (name: string) =>
    `Provider name "${name}" is a JavaScript reserved word and cannot name a namespace. Choose another name.`,
  duplicate: (name: string) =>
    `Provider name "${name}" is declared more than once. Every provider needs a distinct name.`,
  malformed: (index: number) =>
    `Provider ${index} is malformed: a provider is {name: string, tools: string[]} with optional positionalArgs, proxySource and prelude.`,
} as const;

/** What calling a function from the result of an execution that did not retain it rejects with. */
export const FUNCTION_NOT_RETAINED_MESSAGE =
  'This function came from an execution that did not set retainHandles, so it cannot be called. Set retainHandles: true and call it through invokeHandle.';

/** How an inert function marker prints. */
export const INERT_FUNCTION_TEXT = '[a function of the sandbox, not retained]';

export function formatProtocolMismatch(client: number, server: unknown): string {
  return `Executor protocol mismatch: client speaks v${client}, server speaks v${String(server)}`;
}

/**
 * The warning a renamed option (or flag) gets under its old name, written once a process: `entry`
 * is where it was passed (`IsolateExecutor`, `connect()`, `codemode-executor serve`). `both`: the
 * new name was given too, and won.
 */
export function formatRenamedOption(entry: string, oldName: string, newName: string, both: boolean): string {
  const taken = both ? `${newName} is also given, and is used` : `it is taken as ${newName} for now`;
  return `${entry}: ${oldName} is renamed ${newName}, which says its unit; ${taken}. Use ${newName}: the old name will go in a later release.`;
}

export { formatDidYouMean } from './did-you-mean.js';
