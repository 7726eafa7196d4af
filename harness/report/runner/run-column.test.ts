/**
 * The runner's bookkeeping on one column, driven by a scripted column that records what it was
 * asked to run. This checks the order and the infra-error handling of the matrix runner; executor
 * behaviour is measured by the real columns in `npm run matrix`, not here.
 */
import { describe, expect, it } from 'vitest';
import type { Case, LoadedCase, Outcome } from '../../case-model.js';
import { formatPreflightFailed, PREFLIGHT_CASE } from '../../preflight.js';
import { planCell } from '../cell-rules.js';
import type { MatrixColumn } from '../model.js';
import { texts } from '../texts.js';
import type { JudgeContext, Observation } from './judge.js';
import type { Opened } from './open-columns.js';
import type { Progress } from './progress.js';
import { runColumn, runningColumns } from './run-column.js';

const loaded = (id: string, fields: Partial<LoadedCase> = {}): LoadedCase => ({
  id,
  description: id,
  features: [],
  code: 'async () => 1',
  expect: { result: 1 },
  file: 'cases/x.yaml',
  line: 1,
  ...fields,
});

const cases: LoadedCase[] = [
  loaded('probe-stale', { skipOn: [{ versions: ['latest'], reason: 'arrived later' }] }),
  loaded('runs-a'),
  loaded('unsafe', { skipOn: [{ versions: ['latest'], reason: 'spins: wedges wrangler dev', probe: false }] }),
  loaded('unsupported', { reference: false, reason: 'no wire field' }),
  loaded('probe-breaks', { skipOn: [{ versions: ['latest'], reason: 'x' }] }),
  loaded('probe-after-break', { skipOn: [{ versions: ['latest'], reason: 'y' }] }),
  loaded('runs-b', { expect: { result: 2 } }),
];

const column = (): MatrixColumn => ({
  id: 'latest',
  label: 'latest',
  kind: 'reference',
  versions: {
    codemode: '0.5.6',
    executor: null,
    workerd: null,
    wrangler: null,
    compatibilityDate: null,
    compatibilityFlags: [],
  },
});

/** A column that answers from a script and remembers every case it was given. */
function scriptedColumn(script: Record<string, Outcome | Error>) {
  const asked: string[] = [];
  let stops = 0;
  return {
    asked,
    stops: () => stops,
    open: {
      run: async (testCase: Case) => {
        asked.push(testCase.id);
        // A healthy column answers the preflight's `6 * 7`; every case here expects 1 unless scripted.
        const answer = script[testCase.id] ?? { result: testCase.id === PREFLIGHT_CASE.id ? 42 : 1 };
        if (answer instanceof Error) throw answer;
        return answer;
      },
      stop: async () => {
        stops += 1;
      },
    },
  };
}

function harness(opened: Opened) {
  const observed = new Map<string, Observation>();
  const lines: string[] = [];
  const progress: Progress = {
    columnStart: () => {},
    step: () => {},
    failure: (_columnId, _file, caseId, reason) => lines.push(`fail ${caseId}: ${reason}`),
    infra: (_columnId, reason) => lines.push(`infra ${reason}`),
    columnDone: (_columnId, counts) => lines.push(`done ${counts}`),
    line: (text) => lines.push(text),
  };
  const context: JudgeContext = {
    columns: [opened.column],
    plan: planCell,
    observation: (caseId, columnId) => observed.get(`${caseId}@${columnId}`),
  };
  const run = () =>
    runColumn({
      opened,
      cases,
      context,
      progress,
      record: (caseId, columnId, observation) => observed.set(`${caseId}@${columnId}`, observation),
    });
  return { observed, lines, run };
}

describe('runColumn', () => {
  it('runs the preflight, the planned cases, then the probes; never an unsafe skip or an unsupported case', async () => {
    const scripted = scriptedColumn({ 'probe-breaks': new Error('socket hang up'), 'runs-b': { result: 3 } });
    const { observed, lines, run } = harness({ column: column(), open: scripted.open });
    await run();
    expect(scripted.asked).toEqual([PREFLIGHT_CASE.id, 'runs-a', 'runs-b', 'probe-stale', 'probe-breaks']);
    expect(scripted.stops()).toBe(1);
    expect(runningColumns.size).toBe(0);
    expect([...observed.keys()]).toEqual(['runs-a@latest', 'runs-b@latest', 'probe-stale@latest']);
    expect(lines).toEqual([
      `fail runs-b: ${texts.expectationFailed(['result'])}`,
      `fail probe-stale: ${texts.staleSkip('arrived later')}`,
      `infra ${texts.probesStopped('socket hang up')}`,
      `done ${texts.progress.columnCounts(2, 1, 2, 0)}`,
    ]);
  });

  it('makes every planned case an infra-error when the column could not open, and runs nothing', async () => {
    const broken = column();
    const { observed, run } = harness({ column: broken, reason: 'wrangler dev exited before it was ready' });
    await run();
    expect(broken.infraError).toBe('wrangler dev exited before it was ready');
    expect(Object.fromEntries(observed)).toEqual({
      'runs-a@latest': {
        kind: 'infra-error',
        reason: texts.columnUnavailable('wrangler dev exited before it was ready'),
      },
      'runs-b@latest': {
        kind: 'infra-error',
        reason: texts.columnUnavailable('wrangler dev exited before it was ready'),
      },
    });
  });

  it('treats a column that fails its preflight as broken, and still stops it', async () => {
    const scripted = scriptedColumn({ [PREFLIGHT_CASE.id]: { threw: 'workerd exited' } });
    const broken = column();
    const { observed, run } = harness({ column: broken, open: scripted.open });
    await run();
    expect(scripted.asked).toEqual([PREFLIGHT_CASE.id]);
    expect(scripted.stops()).toBe(1);
    expect(broken.infraError).toBe(formatPreflightFailed('latest', '{"threw":"workerd exited"}'));
    expect(observed.get('runs-a@latest')).toEqual({
      kind: 'infra-error',
      reason: texts.columnUnavailable(broken.infraError!),
    });
  });

  it('sends nothing for a case the column refuses, and records the refusal', async () => {
    const scripted = scriptedColumn({});
    const open = {
      ...scripted.open,
      refuses: (testCase: Case) =>
        testCase.id === 'runs-a' ? 'Case "runs-a" cannot be sent to a reference column: x' : undefined,
    };
    const { observed, run } = harness({ column: column(), open });
    await run();
    expect(scripted.asked).not.toContain('runs-a');
    expect(observed.get('runs-a@latest')).toEqual({
      kind: 'refused',
      reason: 'Case "runs-a" cannot be sent to a reference column: x',
    });
  });
});
