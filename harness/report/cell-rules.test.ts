import { describe, expect, it } from 'vitest';
import type { Case } from '../case-model.js';
import { SIDE_NAMES } from '../case-model.js';
import { skipReason } from '../sides/side.js';
import { planCell, runsCase, settleCell, summarizeColumn, summarizeRun } from './cell-rules.js';
import { fixtureCases, fixtureColumns } from './fixture.js';
import { STALE_SKIP_PREFIX, texts } from './texts.js';

const column = (id: string) => {
  const found = fixtureColumns.find((entry) => entry.id === id);
  if (!found) throw new Error(`no fixture column ${id}`);
  return found;
};

const base: Pick<Case, 'reference' | 'reason' | 'skipOn'> = {};

describe('planCell', () => {
  it('runs a case nothing excludes, on every column', () => {
    for (const entry of fixtureColumns) expect(planCell(base, entry)).toEqual({ kind: 'run' });
  });

  it('skips exactly the columns skipOn names, with the case reason, probing when the reason allows', () => {
    const testCase = { skipOn: [{ versions: ['0.2.2' as const], reason: 'the binary codec arrived in 0.3.7' }] };
    expect(planCell(testCase, column('0.2.2'))).toEqual({
      kind: 'skip',
      reason: 'the binary codec arrived in 0.3.7',
      probe: true,
    });
    expect(planCell(testCase, column('0.3.8'))).toEqual({ kind: 'run' });
    expect(planCell(testCase, column('ours'))).toEqual({ kind: 'run' });
  });

  it('reads `ours` as the in-process column only, as the catalogue spec does', () => {
    const testCase = { skipOn: [{ versions: ['ours' as const], reason: 'deliberate superset' }] };
    expect(planCell(testCase, column('ours')).kind).toBe('skip');
    expect(planCell(testCase, column('ours-remote')).kind).toBe('run');
  });

  it('marks reference: false as unsupported on reference columns only, before any skipOn', () => {
    const testCase = {
      reference: false,
      reason: 'outbound respond has no field on the reference wire',
      skipOn: [{ versions: ['latest' as const], reason: 'x' }],
    };
    expect(planCell(testCase, column('latest'))).toEqual({
      kind: 'unsupported',
      reason: 'outbound respond has no field on the reference wire',
    });
    expect(planCell(testCase, column('0.2.2')).kind).toBe('unsupported');
    expect(planCell(testCase, column('ours'))).toEqual({ kind: 'run' });
    expect(planCell(testCase, column('ours-remote'))).toEqual({ kind: 'run' });
  });

  it('never probes a skip whose entry says the case must not run there', () => {
    const reason = 'spins: would wedge wrangler dev';
    const plan = planCell({ skipOn: [{ versions: ['0.4.4'], reason, probe: false }] }, column('0.4.4'));
    expect(plan).toEqual({ kind: 'skip', reason, probe: false });
    expect(runsCase(plan)).toBe(false);
    // The same reason without the flag is still probed: only the flag decides.
    expect(planCell({ skipOn: [{ versions: ['0.4.4'], reason }] }, column('0.4.4'))).toEqual({
      kind: 'skip',
      reason,
      probe: true,
    });
  });

  it('agrees with the catalogue spec on which cells run (harness/sides/side.ts skipReason)', () => {
    for (const testCase of fixtureCases) {
      for (const side of SIDE_NAMES) {
        const plan = planCell(testCase, column(side));
        expect(plan.kind !== 'run', `${testCase.id} on ${side}`).toBe(skipReason(testCase, side) !== null);
      }
    }
  });
});

describe('settleCell', () => {
  const skip = { kind: 'skip', reason: 'collision detection appeared in 0.3.7', probe: true } as const;

  it('passes and fails a planned run on its verdict, keeping the diff', () => {
    expect(settleCell('c', 'latest', { kind: 'run' }, { kind: 'judged', pass: true })).toEqual({
      case: 'c',
      column: 'latest',
      status: 'pass',
    });
    expect(settleCell('c', 'latest', { kind: 'run' }, { kind: 'judged', pass: false, reason: 'r', diff: 'd' })).toEqual(
      {
        case: 'c',
        column: 'latest',
        status: 'fail',
        reason: 'r',
        diff: 'd',
      },
    );
  });

  it('reports a harness break as infra-error, never as a result', () => {
    const cell = settleCell(
      'c',
      '0.3.8',
      { kind: 'run' },
      { kind: 'infra-error', reason: 'wrangler dev did not start' },
    );
    expect(cell).toEqual({ case: 'c', column: '0.3.8', status: 'infra-error', reason: 'wrangler dev did not start' });
  });

  it('turns a skipped case that passes when probed into a failure: the skip reason is stale', () => {
    const cell = settleCell('c', '0.2.2', skip, { kind: 'judged', pass: true });
    expect(cell.status).toBe('fail');
    expect(cell.unexpectedPass).toBe(true);
    expect(cell.reason).toBe(`${STALE_SKIP_PREFIX} (skip reason: collision detection appeared in 0.3.7)`);
  });

  it('keeps a skip whose probe still fails, and says so', () => {
    expect(settleCell('c', '0.2.2', skip, { kind: 'judged', pass: false, reason: 'r', diff: 'd' })).toEqual({
      case: 'c',
      column: '0.2.2',
      status: 'skip',
      reason: skip.reason,
      probe: 'still-fails',
    });
  });

  it('keeps a skip when the probe could not run, without turning the run red', () => {
    expect(settleCell('c', '0.2.2', skip, { kind: 'infra-error', reason: 'x' })).toMatchObject({
      status: 'skip',
      probe: 'not-run',
    });
    expect(settleCell('c', '0.2.2', skip, undefined)).toMatchObject({ status: 'skip', probe: 'not-run' });
    expect(settleCell('c', '0.2.2', { ...skip, probe: false }, undefined)).toMatchObject({
      status: 'skip',
      probe: 'not-probed-unsafe',
    });
  });

  it('reports unsupported with the case reason, and refuses a planned run without an execution', () => {
    expect(settleCell('c', 'latest', { kind: 'unsupported', reason: 'why' }, undefined)).toEqual({
      case: 'c',
      column: 'latest',
      status: 'unsupported',
      reason: 'why',
    });
    expect(planCell({ reference: false }, column('latest'))).toEqual({
      kind: 'unsupported',
      reason: texts.missingReason,
    });
    expect(() => settleCell('c', 'latest', { kind: 'run' }, undefined)).toThrow(
      'case "c" on column "latest" was planned to run but has no execution',
    );
  });
});

describe('summaries', () => {
  const cells = [
    settleCell('a', 'x', { kind: 'run' }, { kind: 'judged', pass: true }),
    settleCell('b', 'x', { kind: 'skip', reason: 'r', probe: true }, { kind: 'judged', pass: true }),
    settleCell('c', 'x', { kind: 'skip', reason: 'r', probe: false }, undefined),
    settleCell('d', 'x', { kind: 'unsupported', reason: 'r' }, undefined),
    settleCell('e', 'y', { kind: 'run' }, { kind: 'infra-error', reason: 'r' }),
    settleCell('f', 'y', { kind: 'run' }, { kind: 'judged', pass: true }),
  ];

  it('counts every status per column, a stale skip as a failure', () => {
    expect(summarizeColumn('x', cells)).toEqual({
      column: 'x',
      total: 4,
      pass: 1,
      fail: 1,
      skip: 1,
      unsupported: 1,
      infraError: 0,
      unexpectedPass: 1,
      green: false,
    });
    expect(summarizeColumn('y', cells)).toMatchObject({ total: 2, pass: 1, infraError: 1, fail: 0, green: false });
  });

  it('is green only with no failure and no infra-error anywhere, and a column that never came up is not green', () => {
    const passing = [settleCell('a', 'x', { kind: 'run' }, { kind: 'judged', pass: true })];
    expect(summarizeRun([{ id: 'x' }], passing).green).toBe(true);
    expect(summarizeRun([{ id: 'x' }, { id: 'y' }], cells).green).toBe(false);
    const broken = summarizeRun([{ id: 'x' }, { id: 'z', infraError: 'wrangler dev did not start' }], passing);
    expect(broken.green).toBe(false);
    expect(broken.columns[1]).toMatchObject({ column: 'z', total: 0, green: false });
  });
});
