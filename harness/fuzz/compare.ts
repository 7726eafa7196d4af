/**
 * Two outcomes compared by the harness's own rules (harness/expect.ts): ours, taken as an exact
 * expectation, applied to the reference's outcome, so result, error text, logs, what execute()
 * threw and the tool calls the host saw, in order, are each compared as a case would compare
 * them. Runtime-neutral.
 */
import type { Expectation, Outcome } from '../case-model.js';
import { checkExpectation, fieldsOf, type Mismatch } from '../expect.js';

const ABSENT = { absent: true } as const;

/** An outcome as the expectation that only it meets: every field, an absent one as `absent`. */
export function exactExpectation(outcome: Outcome): Expectation {
  const expectation: Expectation = {};
  expectation.result = 'result' in outcome ? outcome.result : ABSENT;
  if ('error' in outcome) expectation.error = outcome.error;
  expectation.logs = outcome.logs ?? ABSENT;
  if (outcome.threw !== undefined) expectation.threw = outcome.threw;
  expectation.calls = outcome.calls ?? ABSENT;
  return expectation;
}

/** Where the reference's outcome differs from ours; empty when they agree. */
export function compareOutcomes(ours: Outcome, reference: Outcome): Mismatch[] {
  return checkExpectation(exactExpectation(ours), reference);
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'absent';
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/**
 * What kind of difference it is, without its particular values: the fields that differ and, for
 * each, the kind of value on each side (`logs:array/array error:string/absent`). Shrinking keeps a
 * program only while it differs the same way, so it cannot wander off to another difference.
 */
export function differenceSignature(mismatches: readonly Mismatch[], ours: Outcome, reference: Outcome): string {
  return fieldsOf(mismatches)
    .map((field) => {
      const key = field as keyof Outcome;
      return `${field}:${kindOf(ours[key])}/${kindOf(reference[key])}`;
    })
    .join(' ');
}
