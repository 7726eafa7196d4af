/**
 * Runs the catalogue on one opened column: a preflight, then every case planned to run, then the
 * skipped cases that may be probed for staleness (last, so a probe that breaks the column cannot
 * cost a real result). Records one observation per executed case and reports progress.
 */

import { messageOf } from '../../../src/protocol/errors.js';
import type { Case, LoadedCase } from '../../case-model.js';
import { formatPreflightFailed, PREFLIGHT_CASE, preflightProblem } from '../../preflight.js';
import type { CellPlan } from '../cell-rules.js';
import { planCell, runsCase, settleCell } from '../cell-rules.js';
import type { MatrixColumn } from '../model.js';
import { texts } from '../texts.js';
import type { JudgeContext, Observation } from './judge.js';
import { judgeableNow, judgeCell } from './judge.js';
import type { OpenColumn, Opened } from './open-columns.js';
import type { Progress } from './progress.js';

/** Columns still running, so an interrupted run can stop them (nothing may be left behind). */
export const runningColumns = new Set<OpenColumn>();

/** Beyond a case's own timeout (upstream's longest default is 60 s), how long the harness waits for an outcome. */
const GUARD_GRACE_MS = 60_000;
const DEFAULT_CASE_TIMEOUT_MS = 60_000;

function guardMs(testCase: Case): number {
  return (testCase.options?.timeout ?? DEFAULT_CASE_TIMEOUT_MS) + GUARD_GRACE_MS;
}

function withGuard<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(texts.runTimedOut(ms))), ms);
  });
  return Promise.race([work, guard]).finally(() => clearTimeout(timer));
}

async function observe(open: OpenColumn, testCase: Case): Promise<Observation> {
  const refusal = open.refuses?.(testCase);
  if (refusal !== undefined) return { kind: 'refused', reason: refusal };
  try {
    return { kind: 'outcome', outcome: await withGuard(open.run(testCase), guardMs(testCase)) };
  } catch (error) {
    return { kind: 'infra-error', reason: messageOf(error) };
  }
}

export interface ColumnRun {
  opened: Opened;
  cases: readonly LoadedCase[];
  context: JudgeContext;
  record(caseId: string, columnId: string, observation: Observation): void;
  progress: Progress;
}

/** Marks every case the column would have run as an infra-error carrying the column's reason. */
function markColumnBroken(column: MatrixColumn, reason: string, run: ColumnRun): void {
  column.infraError = reason;
  run.progress.infra(column.id, reason);
  for (const testCase of run.cases) {
    if (planCell(testCase, column).kind === 'run')
      run.record(testCase.id, column.id, { kind: 'infra-error', reason: texts.columnUnavailable(reason) });
  }
  run.progress.step(column.id, run.cases.length, run.cases.length, 0);
}

export async function runColumn(run: ColumnRun): Promise<void> {
  const { column } = run.opened;
  const { progress } = run;
  const started = Date.now();
  progress.columnStart(column.id, run.cases.length);
  if ('reason' in run.opened) {
    markColumnBroken(column, run.opened.reason, run);
    column.durationMs = Date.now() - started;
    return;
  }
  const { open } = run.opened;
  runningColumns.add(open);
  try {
    const preflight = await observe(open, PREFLIGHT_CASE);
    const problem =
      preflight.kind === 'outcome'
        ? preflightProblem(column.id, preflight.outcome)
        : formatPreflightFailed(column.id, preflight.reason);
    if (problem !== undefined) {
      markColumnBroken(column, problem, run);
      return;
    }

    const plans = new Map<string, CellPlan>(run.cases.map((testCase) => [testCase.id, planCell(testCase, column)]));
    const toRun = run.cases.filter((testCase) => plans.get(testCase.id)?.kind === 'run');
    const toProbe = run.cases.filter((testCase) => {
      const plan = plans.get(testCase.id);
      return plan?.kind === 'skip' && runsCase(plan);
    });
    let done = run.cases.length - toRun.length - toProbe.length;
    let failures = 0;
    let infra = 0;
    let probed = 0;
    progress.step(column.id, done, run.cases.length, failures);

    const settleNow = (testCase: LoadedCase) => {
      if (!judgeableNow(testCase, column)) return;
      const cell = settleCell(
        testCase.id,
        column.id,
        plans.get(testCase.id)!,
        judgeCell(testCase, column, run.context),
      );
      if (cell.status === 'fail') {
        failures += 1;
        progress.failure(column.id, testCase.file, testCase.id, cell.reason ?? '');
      } else if (cell.status === 'infra-error') {
        infra += 1;
        progress.infra(column.id, `${testCase.id}: ${cell.reason ?? ''}`);
      }
    };

    for (const testCase of toRun) {
      run.record(testCase.id, column.id, await observe(open, testCase));
      settleNow(testCase);
      done += 1;
      progress.step(column.id, done, run.cases.length, failures);
    }

    let probesStopped: string | undefined;
    for (const testCase of toProbe) {
      if (probesStopped === undefined) {
        const observation = await observe(open, testCase);
        if (observation.kind === 'infra-error') {
          // The probe may have wedged the column: make no more, and say why once.
          probesStopped = observation.reason;
          progress.infra(column.id, texts.probesStopped(observation.reason));
        } else if (observation.kind === 'outcome') {
          // A refused probe records nothing: the skip stands as not probed.
          run.record(testCase.id, column.id, observation);
          probed += 1;
          settleNow(testCase);
        }
      }
      done += 1;
      progress.step(column.id, done, run.cases.length, failures);
    }
    progress.columnDone(column.id, texts.progress.columnCounts(toRun.length, probed, failures, infra));
  } finally {
    runningColumns.delete(open);
    column.durationMs = Date.now() - started;
    await open
      .stop()
      .catch((error: unknown) => progress.infra(column.id, `stopping the column failed: ${messageOf(error)}`));
  }
}
