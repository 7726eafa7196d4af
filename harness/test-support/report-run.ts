/**
 * A fixture run for the report writers' tests (test-only). It tests rendering, not executor behaviour: the cells come
 * from the real rules (planCell, settleCell) applied to scripted outcomes, so every status the
 * report knows appears, with a stale skip, a skip that fails as it says, an upstream expectation,
 * an unsupported case and a column that did not open.
 */
import type { Boundary, LoadedCase, Outcome } from '../case-model.js';
import { type Plan, planCell, settleCell } from '../judge.js';
import { type MatrixCell, type MatrixColumn, type MatrixRun, summarize } from '../report/model.js';
import { INTERPRETING_VERSION, texts } from '../texts.js';

const shared = { workerd: '1.20260426.1', compatibilityDate: '2025-06-01', compatibilityFlags: ['nodejs_compat'] };

const fixtureColumns: MatrixColumn[] = [
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
  ...(['0.2.2', '0.3.8', 'latest'] as const).map(
    (id): MatrixColumn => ({
      id,
      label: id === 'latest' ? 'latest (0.5.6)' : id,
      kind: 'reference',
      versions: { ...shared, codemode: id === 'latest' ? '0.5.6' : id, executor: null, wrangler: '4.86.0' },
    }),
  ),
];

const fixtureBoundaries = new Map<string, Boundary>([
  ['codec', { id: 'codec', release: '0.3.7', reason: '0.3.7 brought the binary codec.' }],
  ['connectors', { id: 'connectors', release: '0.4.0', reason: '0.4.0 brought connectors.' }],
]);

const loaded = (
  file: string,
  line: number,
  fields: Partial<LoadedCase> & Pick<LoadedCase, 'id' | 'description'>,
): LoadedCase => ({
  features: ['result'],
  code: 'async () => 1',
  expect: { result: 'ok' },
  file: `cases/${file}.yaml`,
  line,
  ...fields,
});

const fixtureCases: LoadedCase[] = [
  loaded('binary', 3, {
    id: 'binary-arg',
    description: 'A Uint8Array argument crosses as bytes',
    features: ['binary'],
    skipOn: [{ before: 'codec', expect: { result: 'old' } }],
  }),
  loaded('binary', 20, {
    id: 'binary-result',
    description: 'A Uint8Array result crosses as bytes',
    features: ['binary'],
    skipOn: [{ before: 'codec' }],
  }),
  loaded('connectors', 3, {
    id: 'connector-call',
    description: 'A connector call reaches callTool',
    features: ['connectors'],
    skipOn: [{ before: 'connectors' }],
  }),
  loaded('errors', 3, {
    id: 'error-thrown-string',
    description: 'A thrown string is the error',
    features: ['errors'],
    upstream: { expect: { result: 'upstream' }, reason: 'Ours reports the string; upstream reports success.' },
  }),
  loaded('result', 3, { id: 'result-number', description: 'A number comes back as the result' }),
  loaded('timeout', 3, {
    id: 'timeout-spin',
    description: 'A spin ends at its bound',
    features: ['timeout'],
    unsafeOnReference: 'a spin wedges wrangler dev',
  }),
];

/** Shaped as settleCell writes a diff. */
export const FIXTURE_DIFF = [
  'cases/result.yaml:3 (case "result-number") on 0.3.8 does not meet expect',
  '  outcome: {"result":"other"}',
  '  result: expected "ok", got "other"',
].join('\n');

/** The remote column did not open, so every cell it would have run is an infra-error. */
export const FIXTURE_REMOTE_BREAK = 'the daemon did not print its address within 60000 ms';

/** The outcome a healthy column gives: what the plan expects on a run, the other side's behaviour on a skip. */
function defaultOutcome(plan: Plan): Outcome {
  if (plan.kind === 'run') return { result: plan.upstream ? 'upstream' : 'ok' };
  return { result: plan.kind === 'skip' && plan.failsAs ? 'old' : 'other' };
}

export function fixtureRun(
  options: { date?: string; commit?: string; outcomes?: Record<string, Outcome> } = {},
): MatrixRun {
  const script: Record<string, Outcome> = {
    'result-number@0.3.8': { result: 'other' }, // a failure with a diff
    'binary-result@0.2.2': { result: 'ok' }, // a skipped cell that passes: a stale skip
    ...options.outcomes,
  };
  const columns = fixtureColumns.map((column) =>
    column.id === 'ours-remote' ? { ...column, infraError: FIXTURE_REMOTE_BREAK } : { ...column },
  );
  const cells: MatrixCell[] = [];
  for (const item of fixtureCases) {
    for (const column of columns) {
      const plan = planCell(item, column, fixtureBoundaries);
      const observation =
        plan.kind === 'unsupported'
          ? undefined
          : column.infraError
            ? { kind: 'infra-error' as const, reason: texts.cell.columnUnavailable(column.infraError) }
            : { kind: 'outcome' as const, outcome: script[`${item.id}@${column.id}`] ?? defaultOutcome(plan) };
      cells.push(settleCell(item, column.id, plan, observation));
    }
  }
  return {
    schemaVersion: 2,
    run: {
      date: options.date ?? '2026-11-29T03:15:00.000Z',
      durationMs: 254_000,
      commit: options.commit ?? '3822a5fae1dd42de0507f8a1327da4a7fc74dcf9',
      dirty: false,
      node: 'v20.19.0',
      interpreting: INTERPRETING_VERSION,
    },
    boundaries: [...fixtureBoundaries.values()],
    columns,
    cases: fixtureCases.map((item) => ({
      id: item.id,
      file: item.file,
      line: item.line,
      area: item.file.replace(/^cases\/|\.yaml$/g, ''),
      description: item.description,
      features: item.features,
      ...(item.upstream ? { upstreamReason: item.upstream.reason } : {}),
    })),
    cells,
    summary: summarize(columns, cells),
  };
}

/** Every column up and every cell as it should be. */
export function greenFixtureRun(): MatrixRun {
  const run = fixtureRun({
    outcomes: { 'result-number@0.3.8': { result: 'ok' }, 'binary-result@0.2.2': { result: 'other' } },
  });
  const columns = run.columns.map(({ infraError: _broken, ...column }) => column);
  const cells = run.cells.map((cell) =>
    cell.column === 'ours-remote' && cell.status === 'infra-error'
      ? { case: cell.case, column: cell.column, status: 'pass' as const }
      : cell,
  );
  return { ...run, columns, cells, summary: summarize(columns, cells) };
}
