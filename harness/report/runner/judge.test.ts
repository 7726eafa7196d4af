/**
 * The judging rules on hand-written outcomes. These test how the matrix turns outcomes into
 * verdicts (which side decides, what an infra-error does), not how any executor behaves.
 */
import { describe, expect, it } from 'vitest';
import type { LoadedCase } from '../../case-model.js';
import { planCell } from '../cell-rules.js';
import { texts } from '../texts.js';
import type { JudgeContext, Observation } from './judge.js';
import { judgeableNow, judgeCell, partnersOf } from './judge.js';

const columns = [
  { id: 'ours', kind: 'ours' },
  { id: 'ours-remote', kind: 'ours-remote' },
  { id: '0.2.2', kind: 'reference' },
  { id: 'latest', kind: 'reference' },
] as const;
const column = (id: string) => columns.find((entry) => entry.id === id)!;

function context(observed: Record<string, Observation>): JudgeContext {
  return { columns, plan: planCell, observation: (caseId, columnId) => observed[`${caseId}@${columnId}`] };
}

const outcome = (value: unknown): Observation => ({ kind: 'outcome', outcome: { result: value, logs: [] } });

const withExpect: LoadedCase = {
  id: 'e',
  description: 'd',
  features: [],
  code: 'async () => 42',
  expect: { result: 42 },
  file: 'cases/x.yaml',
  line: 7,
};
const noExpect: LoadedCase = {
  id: 'n',
  description: 'd',
  features: [],
  code: 'async () => 1',
  file: 'cases/x.yaml',
  line: 9,
  skipOn: [{ versions: ['0.2.2'], reason: 'differs on 0.2.2' }],
};

describe('judgeCell with expect', () => {
  it('passes an outcome that meets expect, and fails one that does not with the fields and the diff', () => {
    expect(judgeCell(withExpect, column('latest'), context({ 'e@latest': outcome(42) }))).toEqual({
      kind: 'judged',
      pass: true,
    });
    const verdict = judgeCell(withExpect, column('latest'), context({ 'e@latest': outcome(41) }));
    expect(verdict).toMatchObject({ kind: 'judged', pass: false, reason: texts.expectationFailed(['result']) });
    expect(verdict?.kind === 'judged' && verdict.diff).toBe(
      [
        'cases/x.yaml:7 (case "e") on latest does not meet expect',
        '  outcome: {"result":41,"logs":[]}',
        '  result: expected 42, got 41',
      ].join('\n'),
    );
  });

  it('passes a harness break through as infra-error, and a refusal as a failure naming it', () => {
    expect(
      judgeCell(
        withExpect,
        column('latest'),
        context({ 'e@latest': { kind: 'infra-error', reason: 'wrangler exited' } }),
      ),
    ).toEqual({
      kind: 'infra-error',
      reason: 'wrangler exited',
    });
    expect(
      judgeCell(
        withExpect,
        column('latest'),
        context({ 'e@latest': { kind: 'refused', reason: 'Case "e" cannot be sent' } }),
      ),
    ).toEqual({
      kind: 'judged',
      pass: false,
      reason: 'Case "e" cannot be sent',
    });
    expect(judgeCell(withExpect, column('latest'), context({}))).toBeUndefined();
  });
});

describe('judgeCell without expect', () => {
  it('compares a reference or remote column with ours in-process', () => {
    expect(partnersOf(noExpect, column('latest'), context({}))).toEqual(['ours']);
    expect(partnersOf(noExpect, column('ours-remote'), context({}))).toEqual(['ours']);
    expect(judgeCell(noExpect, column('latest'), context({ 'n@latest': outcome(1), 'n@ours': outcome(1) }))).toEqual({
      kind: 'judged',
      pass: true,
    });
    const verdict = judgeCell(noExpect, column('latest'), context({ 'n@latest': outcome(2), 'n@ours': outcome(1) }));
    expect(verdict).toMatchObject({ kind: 'judged', pass: false, reason: texts.disagrees(['ours'], ['result']) });
    expect(verdict?.kind === 'judged' && verdict.diff).toContain('  result: ours 1, latest 2');
  });

  it('compares ours with every reference column that runs the case, not the ones that skip it', () => {
    expect(partnersOf(noExpect, column('ours'), context({}))).toEqual(['latest']);
    // 0.2.2 skips the case, so its different outcome (a probe) does not count against ours.
    const observed = { 'n@ours': outcome(1), 'n@latest': outcome(1), 'n@0.2.2': outcome(9) };
    expect(judgeCell(noExpect, column('ours'), context(observed))).toEqual({ kind: 'judged', pass: true });
    expect(judgeCell(noExpect, column('ours'), context({ ...observed, 'n@latest': outcome(3) }))).toMatchObject({
      pass: false,
      reason: texts.disagrees(['latest'], ['result']),
    });
  });

  it('is an infra-error when the only side to compare with broke, and a failure when nothing could decide', () => {
    expect(
      judgeCell(
        noExpect,
        column('ours'),
        context({ 'n@ours': outcome(1), 'n@latest': { kind: 'infra-error', reason: 'x' } }),
      ),
    ).toEqual({
      kind: 'infra-error',
      reason: texts.partnerBroke('latest'),
    });
    const unsupported: LoadedCase = { ...noExpect, skipOn: [], reference: false, reason: 'r' };
    expect(judgeCell(unsupported, column('ours'), context({ 'n@ours': outcome(1) }))).toEqual({
      kind: 'judged',
      pass: false,
      reason: texts.nothingDecides,
    });
  });

  it('waits for the references before judging ours, and only then', () => {
    expect(judgeableNow(noExpect, column('ours'))).toBe(false);
    expect(judgeableNow(noExpect, column('latest'))).toBe(true);
    expect(judgeableNow(withExpect, column('ours'))).toBe(true);
  });
});
