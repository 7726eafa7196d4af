/**
 * The rules, written once, that every entry point applies (the vitest spec, the matrix, the case
 * command): `planCell` decides what a case means on a column, `settleCell` turns what happened
 * into the cell. docs/testing.md and docs/interpreting.md explain them.
 *
 * On a reference column a case is `unsupported` when its program is unsafe there or the reference
 * wire refuses it (describeRequest, so that list is computed, not declared), and judged against
 * `upstream.expect` when it differs on purpose. A boundary skip still runs the case: a skipped
 * cell that passes is a stale skip and fails.
 */
import type { Boundary, Case, Expectation, Outcome } from './case-model.js';
import { brief, checkExpectation, fieldsOf, formatMismatches, type Mismatch } from './expect.js';
import type { Flow, FlowOutcome, StepExpectation } from './flow-model.js';
import { checkFlow } from './flows.js';
import { describeRequest } from './reference/request.js';
import type { ColumnVersions, MatrixCell, MatrixColumn } from './report/model.js';
import { texts } from './texts.js';

export type Plan =
  /** `withoutCalls`: a flow on a release whose runtime outcomes do not echo the call log yet. */
  | { kind: 'run'; expect: Expectation; upstream: boolean; withoutCalls?: boolean }
  /**
   * Runs too: it must not meet `expect` (a flow: its steps' expectations), and must meet `failsAs`
   * (a flow: `failsAsSteps`, one per step) when the skip says how it fails.
   */
  | {
      kind: 'skip';
      expect: Expectation;
      upstream: boolean;
      reason: string;
      label: string;
      note?: string;
      failsAs?: Expectation;
      failsAsSteps?: StepExpectation[];
      withoutCalls?: boolean;
    }
  | { kind: 'unsupported'; reason: string; label: string };

/** What running one case on one column produced. */
export type Observation = { kind: 'outcome'; outcome: Outcome | FlowOutcome } | { kind: 'infra-error'; reason: string };

/** A runtime flow, as opposed to an executor case. */
export function isFlow(item: Case | Flow): item is Flow {
  return 'steps' in item;
}

/** The boundary a flow's reference columns must be at or after: upstream's runtime arrived in 0.4.0. */
export const RUNTIME_BOUNDARY = 'runtime';
/** Before it, runtime outcomes carry no `calls`: such columns are judged with `calls` left out. */
const CALLS_ECHO_BOUNDARY = 'runtime-calls-echo';

function before(release: string | null, boundary: Boundary | undefined): boolean {
  return release !== null && boundary !== undefined && compareReleases(release, boundary.release) < 0;
}

/**
 * Reference releases whose platform under wrangler dev cannot run the flows to the end: in full
 * runs its workerd aborts partway, and everything after is lost (docs/reference-columns.md).
 */
const FLOWS_CRASH_REFERENCE: ReadonlySet<string> = new Set(['0.4.4']);

/** A flow runs on every column that hosts a runtime, except a reference release before its boundary. */
function planFlow(item: Flow, column: PlannedColumn, boundaries: ReadonlyMap<string, Boundary>): Plan {
  const release = column.versions.codemode;
  const boundary = boundaries.get(item.since ?? RUNTIME_BOUNDARY);
  if (column.kind !== 'reference') return { kind: 'run', expect: {}, upstream: false };
  if (release !== null && FLOWS_CRASH_REFERENCE.has(release))
    return { kind: 'unsupported', reason: texts.cell.flowsCrash(release), label: texts.cell.flowsCrashLabel };
  if (boundary && before(release, boundary))
    return {
      kind: 'unsupported',
      reason: texts.cell.beforeRuntime(boundary.id, boundary.release, boundary.reason),
      label: texts.cell.beforeRuntimeLabel(boundary.id, boundary.release),
    };
  const withoutCalls = before(release, boundaries.get(CALLS_ECHO_BOUNDARY)) ? { withoutCalls: true } : {};
  const skip = release === null ? undefined : skipFor(item.skipOn, release, boundaries);
  if (skip === undefined) return { kind: 'run', expect: {}, upstream: false, ...withoutCalls };
  const { entry, ...said } = skip;
  return {
    kind: 'skip',
    expect: {},
    upstream: false,
    ...said,
    ...(entry.steps === undefined ? {} : { failsAsSteps: entry.steps }),
    ...withoutCalls,
  };
}

/** Why the reference cannot run the case at all, or undefined when it can. */
export function referenceRefusal(item: Case): { reason: string; label: string } | undefined {
  if (item.unsafeOnReference !== undefined)
    return { reason: texts.cell.unsafe(item.unsafeOnReference), label: texts.cell.unsafeLabel };
  try {
    describeRequest(item);
    return undefined;
  } catch (error) {
    return { reason: (error as Error).message, label: texts.cell.refusedLabel };
  }
}

/** The first skip entry, of a case or a flow, that puts a release on the other side of its boundary. */
function skipFor<Entry extends ({ before: string } | { from: string }) & { note?: string }>(
  entries: readonly Entry[] | undefined,
  release: string,
  boundaries: ReadonlyMap<string, Boundary>,
): { reason: string; label: string; note?: string; entry: Entry } | undefined {
  for (const entry of entries ?? []) {
    const side = 'before' in entry ? 'before' : 'from';
    const boundary = boundaries.get('before' in entry ? entry.before : entry.from);
    if (!boundary) continue; // The loader refuses unknown boundaries; a hand-made case may not.
    const older = compareReleases(release, boundary.release) < 0;
    if (older !== (side === 'before')) continue;
    return {
      reason: texts.cell.skipped(side, boundary.id, boundary.release, boundary.reason, entry.note),
      label: texts.cell.skipLabel(side, boundary.id, boundary.release),
      ...(entry.note === undefined ? {} : { note: entry.note }),
      entry,
    };
  }
  return undefined;
}

/** Release order, by their dotted numbers. */
export function compareReleases(a: string, b: string): number {
  const [left, right] = [a, b].map((release) => release.split('.').map(Number)) as [number[], number[]];
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

/** What planning needs of a column: its kind, and the release a reference column runs (null when unreadable). */
export type PlannedColumn = Pick<MatrixColumn, 'kind'> & { versions: Pick<ColumnVersions, 'codemode'> };

/** What the case means on a column; ours follows no release, so no boundary skips it. */
export function planCell(item: Case | Flow, column: PlannedColumn, boundaries: ReadonlyMap<string, Boundary>): Plan {
  if (isFlow(item)) return planFlow(item, column, boundaries);
  if (column.kind === 'ours-worker')
    return { kind: 'unsupported', reason: texts.cell.flowsOnly, label: texts.cell.flowsOnlyLabel };
  if (column.kind !== 'reference') return { kind: 'run', expect: item.expect, upstream: false };
  const refusal = referenceRefusal(item);
  if (refusal !== undefined) return { kind: 'unsupported', ...refusal };
  const upstream = item.upstream !== undefined;
  const expect = item.upstream?.expect ?? item.expect;
  // A release that cannot be read leaves the column unable to open; its cells say so.
  const release = column.versions.codemode;
  const skip = release === null ? undefined : skipFor(item.skipOn, release, boundaries);
  if (skip === undefined) return { kind: 'run', expect, upstream };
  const { entry, ...said } = skip;
  return { kind: 'skip', expect, upstream, ...said, ...(entry.expect === undefined ? {} : { failsAs: entry.expect }) };
}

/** Where a case is, for a diff: `cases/args.yaml:8 (case "args-spread-two")`. */
function placeOf(item: (Case | Flow) & { file?: string; line?: number }): string {
  return item.file === undefined ? `case "${item.id}"` : `${item.file}:${item.line ?? 1} (case "${item.id}")`;
}

/** The cell for what happened. `observation` is undefined only for an unsupported plan. */
export function settleCell(
  item: (Case | Flow) & { file?: string; line?: number },
  columnId: string,
  plan: Plan,
  observation: Observation | undefined,
): MatrixCell {
  const cell: MatrixCell = { case: item.id, column: columnId, status: 'pass' };
  if (plan.kind === 'unsupported') return { ...cell, status: 'unsupported', reason: plan.reason, label: plan.label };
  if (observation === undefined) throw new Error(`settleCell: "${item.id}" on ${columnId} ran but has no outcome`);
  if (plan.upstream) cell.expectation = 'upstream';
  if (observation.kind === 'infra-error') return { ...cell, status: 'infra-error', reason: observation.reason };
  const { outcome } = observation;
  // A flow is judged step by step; a case by its outcome. Either way, against what the plan says.
  const judge = isFlow(item)
    ? (steps: readonly { expect: StepExpectation }[]) =>
        checkFlow({ steps }, outcome as FlowOutcome, { withoutCalls: plan.withoutCalls === true })
    : undefined;
  const mismatches = judge ? judge((item as Flow).steps) : checkExpectation(plan.expect, outcome as Outcome);
  if (plan.kind === 'skip') {
    if (mismatches.length === 0)
      return {
        ...cell,
        status: 'fail',
        reason: texts.cell.staleSkip(plan.reason),
        label: texts.staleMark,
        unexpectedPass: true,
      };
    const skipped: MatrixCell = { ...cell, status: 'skip', reason: plan.reason, label: plan.label };
    if (plan.note !== undefined) skipped.note = plan.note;
    const otherwise = judge
      ? plan.failsAsSteps && judge(plan.failsAsSteps.map((expect) => ({ expect })))
      : plan.failsAs && checkExpectation(plan.failsAs, outcome as Outcome);
    if (otherwise === undefined) return skipped;
    if (otherwise.length === 0) return { ...skipped, expectation: 'skip' };
    return failed(cell, 'skip', otherwise, texts.cell.diffTitle(placeOf(item), columnId, 'skip'), outcome);
  }
  if (mismatches.length === 0) return cell;
  const against = plan.upstream ? 'upstream' : 'expect';
  return failed(cell, against, mismatches, texts.cell.diffTitle(placeOf(item), columnId, against), outcome);
}

function failed(
  cell: MatrixCell,
  against: 'expect' | 'upstream' | 'skip',
  mismatches: readonly Mismatch[],
  title: string,
  outcome: Outcome | FlowOutcome,
): MatrixCell {
  return {
    ...cell,
    status: 'fail',
    reason: texts.cell.expectationFailed(fieldsOf(mismatches), against),
    diff: [title, `  outcome: ${brief(outcome)}`, formatMismatches(mismatches)].join('\n'),
  };
}
