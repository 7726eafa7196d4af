/**
 * The documented differences (the catalogue's `≠` cases, which carry `upstream` and its reason),
 * recognised by their shape so a fuzz run reports only what is new. Each rule names the catalogue
 * case that documents it; `known.test.ts` checks every named case exists with an `upstream`, and
 * that the rule recognises that case's own two expectations.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Outcome } from '../case-model.js';

export interface KnownDifference {
  /** The catalogue case that documents this difference, with its reason. */
  caseId: string;
  /** Whether ours and the reference differ the way that case documents, for the program `code`. */
  matches(ours: Outcome, reference: Outcome, code: string): boolean;
}

const sameLogs = (ours: Outcome, reference: Outcome) => isDeepStrictEqual(ours.logs, reference.logs);
const sameCalls = (ours: Outcome, reference: Outcome) => isDeepStrictEqual(ours.calls, reference.calls);
/** Whether `fewer` is `value` with some object-valued keys left out, at any depth. */
function dropsKeys(value: unknown, fewer: unknown): boolean {
  if (value === null || fewer === null || typeof value !== 'object' || typeof fewer !== 'object')
    return isDeepStrictEqual(value, fewer);
  if (Array.isArray(value) !== Array.isArray(fewer)) return false;
  const whole = value as Record<string, unknown>;
  const part = fewer as Record<string, unknown>;
  if (Array.isArray(value) && (value as unknown[]).length !== (fewer as unknown[]).length) return false;
  if (Object.keys(part).some((key) => !Object.hasOwn(whole, key))) return false;
  return Object.keys(whole).every((key) =>
    Object.hasOwn(part, key) ? dropsKeys(whole[key], part[key]) : typeof whole[key] === 'object' && whole[key] !== null,
  );
}

const succeeded = (outcome: Outcome) => outcome.error === undefined && outcome.threw === undefined;

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    // A thrown object's non-string message: ours reports its String form, upstream the value.
    caseId: 'error-message-not-a-string',
    matches: (ours, reference) =>
      typeof ours.error === 'string' &&
      reference.error !== undefined &&
      typeof reference.error !== 'string' &&
      (ours.error === String(reference.error) || ours.error === '[object Object]') &&
      sameLogs(ours, reference) &&
      sameCalls(ours, reference),
  },
  {
    // A throw without a truthy message: ours reports it, upstream reports a success.
    caseId: 'error-thrown-string',
    matches: (ours, reference) =>
      typeof ours.error === 'string' &&
      succeeded(reference) &&
      !('result' in reference) &&
      sameLogs(ours, reference) &&
      sameCalls(ours, reference),
  },
  {
    // A thrown null or undefined: ours reports it, upstream's own catch reads its message and rejects.
    caseId: 'error-thrown-null',
    matches: (ours, reference) =>
      (ours.error === 'null' || ours.error === 'undefined') &&
      /^Cannot read properties of (null|undefined) \(reading 'message'\)$/.test(reference.threw ?? ''),
  },
  {
    // A program that does not parse: an error result on ours, a worker that fails to start upstream.
    caseId: 'error-syntax-unbalanced',
    matches: (ours, reference) =>
      typeof ours.error === 'string' &&
      /^Failed to start Worker:\nUncaught SyntaxError: /.test(reference.threw ?? '') &&
      (reference.threw ?? '').split('\n')[1]!.replace('Uncaught SyntaxError: ', '') !== '' &&
      ours.error.includes((reference.threw ?? '').split('\n')[1]!.replace('Uncaught SyntaxError: ', '')),
  },
  {
    // A result with a toJSON method of its own: ours keeps its data, upstream's host serializes nothing.
    caseId: 'result-own-tojson-top-level',
    matches: (ours, reference) =>
      'result' in ours &&
      !('result' in reference) &&
      succeeded(ours) &&
      succeeded(reference) &&
      sameLogs(ours, reference) &&
      sameCalls(ours, reference),
  },
  {
    // The same nested: upstream's result lacks the keys whose objects had a toJSON of their own.
    caseId: 'result-own-tojson-nested',
    matches: (ours, reference) =>
      !isDeepStrictEqual(ours.result, reference.result) &&
      dropsKeys(ours.result, reference.result) &&
      succeeded(ours) &&
      succeeded(reference) &&
      sameLogs(ours, reference) &&
      sameCalls(ours, reference),
  },
  {
    // A failure while upstream reads the error (a throwing message getter): ours reports it as the
    // run's error, upstream's execute() rejects with the same text and the lines are lost.
    caseId: 'error-message-getter-throws',
    matches: (ours, reference) =>
      typeof ours.error === 'string' && reference.threw === ours.error && reference.logs === undefined,
  },
  {
    // A name inherited from Object.prototype: not a tool on ours, upstream reads it off the prototype.
    caseId: 'dispatch-prototype-member-not-a-tool',
    matches: (ours, reference) =>
      typeof ours.result === 'string' &&
      /^Tool "[^"]+" not found/.test(ours.result) &&
      typeof reference.result === 'string' &&
      /^\[object \w+\]$/.test(reference.result),
  },
  {
    // A replaced global setTimeout: ours keeps its bound, upstream runs unbounded.
    caseId: 'instrumentation-noop-settimeout-keeps-bound',
    // Only for a program that replaces it: any other timeout that upstream does not reach is new
    // (on a loaded machine, a program near its bound can time out on one side only).
    matches: (ours, reference, code) =>
      /\bsetTimeout\s*=[^=]/.test(code) && ours.error === 'Execution timed out' && succeeded(reference),
  },
];

/** The catalogue case documenting how these outcomes differ, or undefined when the difference is new. */
export function knownDifference(ours: Outcome, reference: Outcome, code: string): string | undefined {
  return KNOWN_DIFFERENCES.find((known) => known.matches(ours, reference, code))?.caseId;
}
