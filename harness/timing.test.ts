/** Which cases involve time, and the matrix's one rerun of a failing cell of such a case. */
import { describe, expect, it } from 'vitest';
import type { Case } from './case-model.js';
import { loadCatalogue } from './load-cases.js';
import type { MatrixCell } from './report/model.js';
import { isFlaky } from './report/model.js';
import { holdsLaneAlone, involvesTime, withRerun } from './timing.js';

const base: Case = { id: 'c', description: 'c.', features: ['result'], code: '1', expect: { result: 1 } };

describe('a case that involves time', () => {
  it('says so, or is derived from its bound, its delays and its features', () => {
    expect(involvesTime(base)).toBe(false);
    expect(involvesTime({ ...base, options: { timeout: 300 } })).toBe(true);
    expect(involvesTime({ ...base, providers: [{ tools: { slow: { delay: 800 } } }] })).toBe(true);
    expect(involvesTime({ ...base, features: ['clock'] })).toBe(true);
    expect(involvesTime({ ...base, timing: true })).toBe(true);
    expect(involvesTime({ ...base, options: { timeout: 300 }, timing: false })).toBe(false);
    // The case the first fresh clone went red on is one.
    const { cases } = loadCatalogue();
    expect(involvesTime(cases.find((item) => item.id === 'timeout-native-clock-skips-tool-waits')!)).toBe(true);
  });
});

describe('a case that holds its lane alone', () => {
  it('is one that involves time, or a flow whose tools answer late or whose steps start late', () => {
    expect(holdsLaneAlone(base)).toBe(false);
    expect(holdsLaneAlone({ ...base, options: { timeout: 300 } })).toBe(true);
    const { cases } = loadCatalogue();
    const byId = (id: string) => cases.find((item) => item.id === id)!;
    // A flow that expires a run after 4 s while its tool is slow, and one that only steps.
    expect(holdsLaneAlone(byId('runtime-expire-running'))).toBe(true);
    expect(holdsLaneAlone(byId('runtime-rollback-during-pass-ends-completed'))).toBe(true);
    expect(holdsLaneAlone(byId('runtime-approve-not-paused'))).toBe(false);
  });
});

describe('the rerun', () => {
  const failed: MatrixCell = { case: 'c', column: 'ours', status: 'fail', reason: 'outcome differs from expect' };
  const passed: MatrixCell = { case: 'c', column: 'ours', status: 'pass' };
  const scripted = (...cells: MatrixCell[]) => {
    let calls = 0;
    return { attempt: async () => ({ cell: cells[calls++]! }), calls: () => calls };
  };
  const timed: Case = { ...base, options: { timeout: 300 } };

  it('passes a flaky cell: failed once, passed on the rerun, with the first failure kept', async () => {
    const run = scripted(failed, passed);
    const { cell } = await withRerun(timed, run.attempt);
    expect(cell).toEqual({ ...passed, rerun: { status: 'fail', reason: 'outcome differs from expect' } });
    expect(isFlaky(cell)).toBe(true);
    expect(run.calls()).toBe(2);
  });

  it('fails a cell whose failure reproduces, and reruns nothing else', async () => {
    const twice = await withRerun(timed, scripted(failed, failed).attempt);
    expect([twice.cell.status, isFlaky(twice.cell), twice.cell.rerun?.status]).toEqual(['fail', false, 'fail']);
    const untimed = scripted(failed, passed);
    expect((await withRerun(base, untimed.attempt)).cell).toEqual(failed);
    const passing = scripted(passed, failed);
    expect((await withRerun(timed, passing.attempt)).cell).toEqual(passed);
    const stopped = scripted(failed, passed);
    expect((await withRerun(timed, stopped.attempt, () => false)).cell).toEqual(failed);
    expect([untimed.calls(), passing.calls(), stopped.calls()]).toEqual([1, 1, 1]);
  });
});
