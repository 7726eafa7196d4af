/**
 * A fixture run for the writers' tests. It tests rendering, not executor behaviour: the cells are
 * produced by the real status rules (planCell/settleCell) from scripted executions, so every
 * status the report knows appears at least once, including a stale skip and a broken column.
 */
import type { LoadedCase } from '../case-model.js';
import { catalogueOrder, toMatrixCase } from './case-entry.js';
import type { Execution } from './cell-rules.js';
import { planCell, settleCell, summarizeRun } from './cell-rules.js';
import type { MatrixCell, MatrixColumn, MatrixRun } from './model.js';
import { texts } from './texts.js';

export const FIXTURE_ROOT = '/repo';

const shared = { workerd: '1.20260426.1', compatibilityDate: '2025-06-01', compatibilityFlags: ['nodejs_compat'] };

export const fixtureColumns: MatrixColumn[] = [
  {
    id: 'ours',
    label: 'ours',
    kind: 'ours',
    versions: { ...shared, codemode: null, executor: '0.1.0', wrangler: null },
  },
  {
    id: 'ours-remote',
    label: 'ours-remote',
    kind: 'ours-remote',
    versions: { ...shared, codemode: null, executor: '0.1.0', wrangler: null },
  },
  ...(['0.2.2', '0.3.8', '0.4.4'] as const).map(
    (release): MatrixColumn => ({
      id: release,
      label: release,
      kind: 'reference',
      versions: { ...shared, codemode: release, executor: null, wrangler: '4.86.0' },
    }),
  ),
  {
    id: 'latest',
    label: 'latest (0.5.6)',
    kind: 'reference',
    versions: { ...shared, codemode: '0.5.6', executor: null, wrangler: '4.86.0' },
  },
];

/** Shaped like `judge()` output from harness/expect.ts. */
export const FIXTURE_DIFF = [
  'cases/dispatch.yaml:3 (case "args-two-numbers") on 0.3.8 does not meet expect',
  '  outcome: {"result":[1]}',
  '  result: expected [1,2] (2 items), got [1] (1 items)',
].join('\n');

const loaded = (
  file: string,
  line: number,
  fields: Partial<LoadedCase> & Pick<LoadedCase, 'id' | 'description' | 'features'>,
): LoadedCase => ({
  code: 'return 1',
  file: `${FIXTURE_ROOT}/cases/${file}.yaml`,
  line,
  ...fields,
});

export const fixtureCases: LoadedCase[] = [
  loaded('results', 3, {
    id: 'result-number',
    description: 'A number comes back as the result',
    features: ['result-shape'],
  }),
  loaded('results', 12, {
    id: 'result-undefined',
    description: 'Nothing returned gives no result key',
    features: ['result-shape'],
  }),
  loaded('dispatch', 3, {
    id: 'args-two-numbers',
    description: 'Two arguments reach the tool spread',
    features: ['tool-args'],
    skipOn: [
      { versions: ['0.2.2'], reason: '0.2.2 passes the first argument only (argument conventions moved in 0.3.7)' },
    ],
  }),
  loaded('dispatch', 20, {
    id: 'args-bytes',
    description: 'A Uint8Array argument crosses as bytes',
    features: ['tool-args', 'binary-codec'],
    skipOn: [{ versions: ['0.2.2'], reason: 'the binary codec arrived in 0.3.7' }],
  }),
  loaded('dispatch', 41, {
    id: 'collision-detected',
    description: 'Two raw names that sanitize alike are refused',
    features: ['sanitize-collision'],
    skipOn: [{ versions: ['0.2.2'], reason: 'collision detection appeared in 0.3.7' }],
  }),
  loaded('timeouts', 3, {
    id: 'spin-times-out',
    description: 'A busy loop is stopped by the timeout',
    features: ['timeout'],
    reference: false,
    reason: 'a spinning execution would wedge wrangler dev, which enforces no CPU limit on a loaded worker',
  }),
  loaded('timeouts', 15, {
    id: 'spin-after-await',
    description: 'A busy loop after an await is stopped too',
    features: ['timeout'],
    skipOn: [
      { versions: ['0.2.2', '0.3.8', '0.4.4', 'latest'], reason: 'spins: would wedge wrangler dev', probe: false },
    ],
  }),
];

/** What each cell "did": the default is a pass; these are the exceptions. */
const scripted: Record<string, Execution> = {
  // A real failure with a diff, on one release only.
  'args-two-numbers@0.3.8': {
    kind: 'judged',
    pass: false,
    reason: 'outcome differs from expect in result',
    diff: FIXTURE_DIFF,
  },
  // A skipped cell that passes when probed: the reason went stale.
  'collision-detected@0.2.2': { kind: 'judged', pass: true },
  // Skipped cells that still fail when probed: the skips hold.
  'args-two-numbers@0.2.2': {
    kind: 'judged',
    pass: false,
    reason: 'outcome differs from expect in result',
    diff: FIXTURE_DIFF,
  },
  'args-bytes@0.2.2': {
    kind: 'judged',
    pass: false,
    reason: 'outcome differs from expect in result',
    diff: FIXTURE_DIFF,
  },
};

/** The remote column broke while starting, so every cell it would have run is an infra-error. */
export const FIXTURE_REMOTE_BREAK = 'the daemon did not print its address within 30000 ms';

export function fixtureRun(
  options: { date?: string; commit?: string; overrides?: Record<string, Execution> } = {},
): MatrixRun {
  const script = { ...scripted, ...options.overrides };
  const cells: MatrixCell[] = [];
  const columns = fixtureColumns.map((column) =>
    column.id === 'ours-remote' ? { ...column, infraError: FIXTURE_REMOTE_BREAK } : { ...column },
  );
  for (const testCase of fixtureCases) {
    for (const column of columns) {
      const plan = planCell(testCase, column);
      let execution: Execution | undefined = script[`${testCase.id}@${column.id}`] ?? { kind: 'judged', pass: true };
      if (column.infraError) execution = { kind: 'infra-error', reason: texts.columnUnavailable(column.infraError) };
      if (plan.kind === 'unsupported' || (plan.kind === 'skip' && !plan.probe)) execution = undefined;
      cells.push(settleCell(testCase.id, column.id, plan, execution));
    }
  }
  return {
    schemaVersion: 1,
    run: {
      date: options.date ?? '2026-11-29T03:15:00.000Z',
      durationMs: 254_000,
      commit: options.commit ?? '3822a5fae1dd42de0507f8a1327da4a7fc74dcf9',
      dirty: false,
      node: 'v20.19.0',
    },
    columns,
    cases: catalogueOrder(fixtureCases.map((testCase) => toMatrixCase(testCase, FIXTURE_ROOT))),
    cells,
    summary: summarizeRun(columns, cells),
  };
}

/** The same catalogue with every column up and every judged cell passing (stale skip fixed). */
export function greenFixtureRun(): MatrixRun {
  const run = fixtureRun({
    overrides: {
      'args-two-numbers@0.3.8': { kind: 'judged', pass: true },
      'collision-detected@0.2.2': { kind: 'judged', pass: false, reason: 'no collision error', diff: FIXTURE_DIFF },
    },
  });
  const columns = run.columns.map(({ infraError: _broken, ...column }) => column);
  const cells = run.cells.map((cell) =>
    cell.column === 'ours-remote' && cell.status === 'infra-error'
      ? { case: cell.case, column: cell.column, status: 'pass' as const }
      : cell,
  );
  return { ...run, columns, cells, summary: summarizeRun(columns, cells) };
}
