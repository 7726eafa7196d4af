import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureRun } from './fixture.js';
import type { HistoryRecord } from './history.js';
import { computeTransitions, historyFileName, parseHistoryRecord, toHistoryRecord } from './history.js';
import { readHistory, writeReports } from './write-reports.js';

/** A record written by hand: columns and one letter string per case. */
function record(date: string, cases: Record<string, string>, latestRelease = '0.5.6'): HistoryRecord {
  return {
    schemaVersion: 1,
    date,
    commit: null,
    legend: '',
    columns: [
      { id: 'ours', release: null },
      { id: '0.2.2', release: '0.2.2' },
      { id: 'latest', release: latestRelease },
    ],
    cases,
  };
}

describe('history records', () => {
  it('keep one letter per column for every case, in column order', () => {
    const compact = toHistoryRecord(fixtureRun());
    expect(compact.columns.map((column) => column.id)).toEqual([
      'ours',
      'ours-remote',
      '0.2.2',
      '0.3.8',
      '0.4.4',
      'latest',
    ]);
    expect(compact.columns.find((column) => column.id === 'latest')?.release).toBe('0.5.6');
    // ours pass · remote broke · 0.2.2 stale skip · 0.3.8 fail · 0.4.4 pass · latest pass
    expect(compact.cases['collision-detected']).toBe('pifppp');
    expect(compact.cases['args-two-numbers']).toBe('pisfpp');
    expect(compact.cases['spin-after-await']).toBe('pissss');
    expect(compact.cases['spin-times-out']).toBe('piuuuu');
  });

  it('are named by their UTC start time, sortable and legal on every file system', () => {
    expect(historyFileName('2026-11-29T03:15:07.123Z')).toBe('2026-11-29T031507.json');
    expect(() => historyFileName('yesterday')).toThrow('"yesterday" is not an ISO 8601 date-time');
  });

  it('are refused when they are not records, naming the file and the case', () => {
    expect(() => parseHistoryRecord('{', 'h/a.json')).toThrow(/^h\/a\.json: not JSON/);
    expect(() => parseHistoryRecord('{"schemaVersion":2}', 'h/b.json')).toThrow('h/b.json: not a history record');
    const bad = JSON.stringify(record('2026-01-01T00:00:00.000Z', { x: 'pq' }));
    expect(() => parseHistoryRecord(bad, 'h/c.json')).toThrow(
      'h/c.json: case "x" has statuses "pq", expected 3 of p f s u i -',
    );
  });
});

describe('computeTransitions', () => {
  it('reports only cases whose status changed, newest first, with the first column that changed', () => {
    const transitions = computeTransitions([
      record('2026-11-27T03:00:00.000Z', { steady: 'ppp', flips: 'ppp', fixed: 'pff' }),
      record('2026-11-28T03:00:00.000Z', { steady: 'ppp', flips: 'pfp', fixed: 'pff' }),
      record('2026-11-29T03:00:00.000Z', { steady: 'ppp', flips: 'fpf', fixed: 'ppp' }),
    ]);
    expect(transitions.map((t) => [t.date.slice(0, 10), t.case, t.firstColumn])).toEqual([
      ['2026-11-29', 'flips', 'ours'],
      ['2026-11-29', 'fixed', '0.2.2'],
      ['2026-11-28', 'flips', '0.2.2'],
    ]);
    expect(transitions[0]?.changes).toEqual([
      { column: 'ours', from: 'pass', to: 'fail' },
      { column: '0.2.2', from: 'fail', to: 'pass' },
      { column: 'latest', from: 'pass', to: 'fail' },
    ]);
    expect(transitions[0]?.previousDate).toBe('2026-11-28T03:00:00.000Z');
  });

  it('lets an infra-error neither start nor end a transition', () => {
    const transitions = computeTransitions([
      record('2026-11-27T03:00:00.000Z', { a: 'ppp', b: 'ppp' }),
      record('2026-11-28T03:00:00.000Z', { a: 'pii', b: 'pii' }),
      record('2026-11-29T03:00:00.000Z', { a: 'ppp', b: 'ppf' }),
    ]);
    expect(transitions).toHaveLength(1);
    expect(transitions[0]).toMatchObject({
      case: 'b',
      firstColumn: 'latest',
      changes: [{ column: 'latest', from: 'pass', to: 'fail' }],
    });
  });

  it('names the releases when the latest column moved between the runs', () => {
    const transitions = computeTransitions([
      record('2026-11-28T03:00:00.000Z', { a: 'ppp' }, '0.5.6'),
      record('2026-11-29T03:00:00.000Z', { a: 'ppf' }, '0.6.0'),
    ]);
    expect(transitions[0]?.changes).toEqual([
      { column: 'latest', from: 'pass', to: 'fail', fromRelease: '0.5.6', toRelease: '0.6.0' },
    ]);
  });

  it('does not count a case or a column appearing for the first time as a change', () => {
    const older = record('2026-11-28T03:00:00.000Z', { a: 'ppp' });
    const newer: HistoryRecord = {
      ...record('2026-11-29T03:00:00.000Z', { a: 'pppf', b: 'ffff' }),
      columns: [...older.columns, { id: 'ours-remote', release: null }],
    };
    expect(computeTransitions([older, newer])).toEqual([]);
  });
});

describe('the history directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'matrix-history-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gains one record per run, and the written views read transitions from all of them', () => {
    writeReports(fixtureRun({ date: '2026-11-28T03:00:00.000Z' }), dir);
    const second = writeReports(
      fixtureRun({
        date: '2026-11-29T03:00:00.000Z',
        overrides: { 'args-two-numbers@0.3.8': { kind: 'judged', pass: true } },
      }),
      dir,
    );
    expect(readdirSync(join(dir, 'history')).sort()).toEqual(['2026-11-28T030000.json', '2026-11-29T030000.json']);
    expect(readHistory(join(dir, 'history'))).toHaveLength(2);
    expect(second.transitions).toEqual([
      {
        case: 'args-two-numbers',
        date: '2026-11-29T03:00:00.000Z',
        commit: fixtureRun().run.commit,
        previousDate: '2026-11-28T03:00:00.000Z',
        firstColumn: '0.3.8',
        changes: [{ column: '0.3.8', from: 'fail', to: 'pass' }],
      },
    ]);
    expect(readFileSync(join(dir, 'matrix.md'), 'utf8')).toContain(
      '| 2026-11-29T03:00:00.000Z | [`args-two-numbers`](../cases/dispatch.yaml#L3) | 0.3.8 | 0.3.8: fail → pass |',
    );
  });

  it('refuses to render from a corrupt record rather than half-reading history', () => {
    writeFileSync(join(dir, 'history', '2026-11-30T000000.json'), '{"schemaVersion":1}');
    expect(() => writeReports(fixtureRun({ date: '2026-12-01T03:00:00.000Z' }), dir)).toThrow(
      '2026-11-30T000000.json: not a history record',
    );
  });
});
