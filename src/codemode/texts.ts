/**
 * Every text the dialect adapter composes. Hosts on the dialect surface them to their model and
 * their operators, and the compatibility cases diff them character for character against the
 * reference, so each is contract: a reword here is a deliberate edit, in one place.
 */
import { describeValue } from '../protocol/describe-value.js';
import type { NameRejectionTexts } from '../protocol/providers.js';
import { formatDidYouMean } from '../protocol/texts.js';
import type { LogLevel } from '../protocol/types.js';

/** Which list a name came from; the name texts open with it. */
type NameKind = 'Provider' | 'Connector';

function nameTexts(kind: NameKind): NameRejectionTexts {
  return {
    reserved: (name) => `${kind} name "${name}" is reserved`,
    notIdentifier: (name) => `${kind} name "${name}" is not a valid JavaScript identifier`,
    reservedWord: (name) => `${kind} name "${name}" is a JavaScript reserved word`,
    // The connector wording is also the text of a clash between two connectors, as upstream words it.
    duplicate: (name) =>
      kind === 'Provider'
        ? `Duplicate provider name "${name}"`
        : `Duplicate name "${name}" (connector clashes with provider)`,
  };
}

/** The dialect's name rejection texts, one table per list, as the protocol's name rules take them. */
export const nameRejection: Readonly<Record<NameKind, NameRejectionTexts>> = {
  Provider: nameTexts('Provider'),
  Connector: nameTexts('Connector'),
};

/** The text two raw tool names of one provider produce when they sanitize alike. */
export function formatSanitizeCollision(first: string, second: string, sanitized: string, provider: string): string {
  return `Tool names "${first}" and "${second}" both sanitize to "${sanitized}" in provider "${provider}"`;
}

/** The texts of a call whose providers argument is not providers at all: a host bug, so `execute` rejects. */
export const malformedProvider = {
  notObject: (index: number, provider: unknown) =>
    `Provider at index ${index} is ${provider === null ? 'null' : typeof provider}, not {name, fns}`,
  noFunctions: (index: number, name: unknown, fns: unknown) =>
    `Provider "${String(name)}" (index ${index}) has no record of functions: fns is ${fns === null ? 'null' : typeof fns}`,
} as const;

/** What each captured line opens with, by level, in the flat lines the dialect returns. */
export const LOG_PREFIXES: Readonly<Record<LogLevel, string>> = { log: '', warn: '[warn] ', error: '[error] ' };

/** Written to `console.warn` the first time a process passes a bare record. */
export const BARE_RECORD_DEPRECATION =
  '[@supolka/cloudflare-codemode-executor] Passing a bare functions record to execute() is deprecated. Pass an array of providers instead.';

/** What a connector's pause marker becomes: the message of the throw the sandbox sees. */
export const PAUSE_MESSAGE = '__CODEMODE_PAUSE__';

/** Where the first wrong call meets a text: the constructor's argument and execute()'s option names. */
const NATIVE_EXPECTED =
  "a native executor: an object with execute(request) and dispose(), such as new IsolateExecutor() from '@supolka/cloudflare-codemode-executor/isolate' or await connect(url)";

export const constructionText = {
  /** `new CodemodeExecutor()`, or anything that is not an executor and not options. */
  notAnExecutor: (got: string) => `new CodemodeExecutor() takes ${NATIVE_EXPECTED}. Got ${got}.`,
  /** Upstream's constructor options (`{ timeout, loader, globalOutbound, modules }`) passed as they were. */
  options: (names: readonly string[]) =>
    `new CodemodeExecutor() takes ${NATIVE_EXPECTED}, not options (got an object with ${names.join(', ')}). ` +
    'timeout goes to the native executor, new IsolateExecutor({ timeout }) or connect(url, { timeout }), or on ' +
    'each call, execute(code, providers, { timeout }); docs/moving-a-host.md says where the other options went.',
} as const;

/**
 * Written once per process for each option name `execute()` does not know; the call goes on
 * without it. `nearest`: the option most likely meant.
 */
export function formatUnknownExecuteOption(name: string, known: readonly string[], nearest?: string): string {
  // Quoted and cut short by describeValue: a key is the host's, and may hold anything.
  return `[@supolka/cloudflare-codemode-executor] execute() ignores the option ${describeValue(name)}${formatDidYouMean(nearest)}: the options it knows are ${known.join(', ')}.`;
}

/** A program over `maxCodeBytes`, refused before normalization reads it; the run's `error`. */
export function formatCodeTooLarge(size: number, cap: number): string {
  return `The code is ${size} bytes, above the cap of ${cap} bytes (CodemodeExecutor option maxCodeBytes). Send a smaller program, or pass large data through a tool.`;
}

/** A constructor option its row does not take (options.ts); `rule` is the row's. */
export function formatConstructorOptionInvalid(name: string, rule: string, got: string): string {
  return `CodemodeExecutor option ${name} must be ${rule}, got ${got}.`;
}

/** A constructor option the rows do not have; `nearest`: the one most likely meant. */
export function formatConstructorOptionUnknown(name: string, known: readonly string[], nearest?: string): string {
  return `CodemodeExecutor has no option ${describeValue(name)}${formatDidYouMean(nearest)}; the options are ${known.join(', ')}.`;
}
