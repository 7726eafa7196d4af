/**
 * Judging what a column observed, with harness/expect.ts: against `expect` when the case has one,
 * otherwise against the other side. Without `expect`, a reference or remote column is compared
 * with ours in-process, and ours with every reference column that runs the case (not skipped, not
 * unsupported): "the reference decides". A partner that broke makes the cell an infra-error, never a
 * result.
 */
import type { LoadedCase, Outcome, SideName } from '../../case-model.js';
import type { Mismatch } from '../../expect.js';
import { checkExpectation, compareOutcomes, judge } from '../../expect.js';
import { comparisonPartners } from '../../sides/side.js';
import type { CellPlan, Execution } from '../cell-rules.js';
import type { MatrixColumn } from '../model.js';
import { texts } from '../texts.js';

/** What running one case on one column produced. */
export type Observation =
  | { kind: 'outcome'; outcome: Outcome }
  /** The harness broke: no outcome exists. */
  | { kind: 'infra-error'; reason: string }
  /** The column cannot express the case (describeRequest refused it): the case needs `reference: false`. */
  | { kind: 'refused'; reason: string };

export interface JudgeContext {
  columns: readonly Pick<MatrixColumn, 'id' | 'kind'>[];
  plan(testCase: LoadedCase, column: Pick<MatrixColumn, 'id' | 'kind'>): CellPlan;
  observation(caseId: string, columnId: string): Observation | undefined;
}

/** The top-level outcome fields a set of mismatches touches, in first-seen order. */
function fieldsOf(mismatches: readonly Mismatch[]): string[] {
  return [...new Set(mismatches.map((mismatch) => /^[A-Za-z_$][\w$]*/.exec(mismatch.path)?.[0] ?? mismatch.path))];
}

/** Whose outcome a case without `expect` is compared with on this column (the rule the catalogue spec uses too). */
export function partnersOf(
  testCase: LoadedCase,
  column: Pick<MatrixColumn, 'id' | 'kind'>,
  context: JudgeContext,
): string[] {
  return comparisonPartners(
    testCase,
    column.id as SideName,
    context.columns.map((other) => other.id as SideName),
  );
}

/** Can this cell be judged before later columns run? Ours without `expect` waits for the references. */
export function judgeableNow(testCase: LoadedCase, column: Pick<MatrixColumn, 'kind'>): boolean {
  return testCase.expect !== undefined || column.kind !== 'ours';
}

/** The verdict on one observed cell, or undefined when nothing was observed. */
export function judgeCell(
  testCase: LoadedCase,
  column: Pick<MatrixColumn, 'id' | 'kind'>,
  context: JudgeContext,
): Execution | undefined {
  const own = context.observation(testCase.id, column.id);
  if (!own) return undefined;
  if (own.kind === 'infra-error') return own;
  if (own.kind === 'refused') return { kind: 'judged', pass: false, reason: own.reason };
  if (testCase.expect !== undefined) {
    const mismatches = checkExpectation(testCase.expect, own.outcome);
    if (!mismatches.length) return { kind: 'judged', pass: true };
    return {
      kind: 'judged',
      pass: false,
      reason: texts.expectationFailed(fieldsOf(mismatches)),
      diff: judge(testCase, column.id, own.outcome) ?? '',
    };
  }
  const compared: { side: string; outcome: Outcome }[] = [];
  const broken: string[] = [];
  for (const partner of partnersOf(testCase, column, context)) {
    const seen = context.observation(testCase.id, partner);
    if (seen?.kind === 'outcome') compared.push({ side: partner, outcome: seen.outcome });
    else if (seen?.kind === 'infra-error') broken.push(partner);
  }
  if (!compared.length) {
    return broken.length
      ? { kind: 'infra-error', reason: texts.partnerBroke(broken.join(', ')) }
      : { kind: 'judged', pass: false, reason: texts.nothingDecides };
  }
  const differing = compared
    .map((other) => ({ other, mismatches: compareOutcomes(other.outcome, own.outcome) }))
    .filter((entry) => entry.mismatches.length > 0);
  if (!differing.length) return { kind: 'judged', pass: true };
  return {
    kind: 'judged',
    pass: false,
    reason: texts.disagrees(
      differing.map((entry) => entry.other.side),
      fieldsOf(differing.flatMap((entry) => entry.mismatches)),
    ),
    diff: differing.map((entry) => judge(testCase, column.id, own.outcome, entry.other) ?? '').join('\n\n'),
  };
}
