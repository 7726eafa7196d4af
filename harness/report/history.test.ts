import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureRun } from '../test-support/report-run.js';
import type { HistoryRecord } from './history.js';
import { changesByRun, historyFileName, parseHistoryRecord, toHistoryRecord } from './history.js';
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

const LATER_COMMIT = 'b0d5e1c2a3f4b0d5e1c2a3f4b0d5e1c2a3f4b0d5';

const changesOf = (records: HistoryRecord[]) => changesByRun(records).map((entry) => entry.changes);

describe('history records', () => {
  it('keep one letter per column for every case, in column order', () => {
    const compact = toHistoryRecord(fixtureRun());
    expect(compact.columns).toEqual([
      { id: 'ours', release: null },
      { id: 'ours-remote', release: null },
      { id: '0.2.2', release: '0.2.2' },
      { id: '0.3.8', release: '0.3.8' },
      { id: 'latest', release: '0.5.6' },
    ]);
    // ours pass · remote did not open · 0.2.2 fails as the skip says · 0.3.8 and latest pass
    expect(compact.cases['binary-arg']).toBe('pispp');
    expect(compact.cases['binary-result']).toBe('pifpp'); // the stale skip on 0.2.2
    expect(compact.cases['timeout-spin']).toBe('piuuu');
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

describe('changesByRun', () => {
  it('gives each run the cells that changed since the run before, and the cases it added or dropped', () => {
    const [first, second, third] = changesOf([
      record('2026-11-27T03:00:00.000Z', { steady: 'ppp', flips: 'ppp', gone: 'ppp' }),
      record('2026-11-28T03:00:00.000Z', { steady: 'ppp', flips: 'pfp', gone: 'ppp' }),
      record('2026-11-29T03:00:00.000Z', { steady: 'ppp', flips: 'fpp', added: 'fff' }),
    ]);
    expect(first).toEqual({ previous: null, changes: [], newCases: [], removedCases: [] });
    expect(second).toEqual({
      previous: { date: '2026-11-27T03:00:00.000Z', commit: null },
      changes: [{ case: 'flips', column: '0.2.2', from: 'pass', to: 'fail' }],
      newCases: [],
      removedCases: [],
    });
    expect(third).toEqual({
      previous: { date: '2026-11-28T03:00:00.000Z', commit: null },
      changes: [
        { case: 'flips', column: 'ours', from: 'pass', to: 'fail' },
        { case: 'flips', column: '0.2.2', from: 'fail', to: 'pass' },
      ],
      newCases: ['added'],
      removedCases: ['gone'],
    });
  });

  it('lets an infra-error neither start nor end a change', () => {
    const changes = changesOf([
      record('2026-11-27T03:00:00.000Z', { a: 'ppp', b: 'ppp' }),
      record('2026-11-28T03:00:00.000Z', { a: 'pii', b: 'pii' }),
      record('2026-11-29T03:00:00.000Z', { a: 'ppp', b: 'ppf' }),
    ]);
    expect(changes[1]?.changes).toEqual([]);
    expect(changes[2]?.changes).toEqual([{ case: 'b', column: 'latest', from: 'pass', to: 'fail' }]);
  });

  it('names the releases when the latest column moved between the runs', () => {
    const changes = changesOf([
      record('2026-11-28T03:00:00.000Z', { a: 'ppp' }, '0.5.6'),
      record('2026-11-29T03:00:00.000Z', { a: 'ppf' }, '0.6.0'),
    ]);
    expect(changes[1]?.changes).toEqual([
      { case: 'a', column: 'latest', from: 'pass', to: 'fail', releases: { from: '0.5.6', to: '0.6.0' } },
    ]);
  });

  it('does not count a column appearing, or a column left out, as a change', () => {
    const older = record('2026-11-28T03:00:00.000Z', { a: 'ppp' });
    const newer: HistoryRecord = {
      ...record('2026-11-29T03:00:00.000Z', { a: 'p-pf' }),
      columns: [...older.columns, { id: 'ours-remote', release: null }],
    };
    expect(changesOf([older, newer])[1]?.changes).toEqual([]);
  });
});

describe('the history directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'matrix-history-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gains one record per run, and the run as written says what changed since the previous one', () => {
    const first = writeReports(fixtureRun({ date: '2026-11-28T03:00:00.000Z' }), dir);
    expect(first.since).toEqual({ previous: null, changes: [], newCases: [], removedCases: [] });
    const second = writeReports(
      // Another commit: a change between two runs of the same clean commit would be flaky, not a change.
      fixtureRun({
        date: '2026-11-29T03:00:00.000Z',
        commit: LATER_COMMIT,
        outcomes: { 'result-number@0.3.8': { result: 'ok' } },
      }),
      dir,
    );
    expect(readdirSync(join(dir, 'history')).sort()).toEqual(['2026-11-28T030000.json', '2026-11-29T030000.json']);
    expect(readHistory(join(dir, 'history'))).toHaveLength(2);
    expect(second.since).toEqual({
      previous: { date: '2026-11-28T03:00:00.000Z', commit: fixtureRun().run.commit },
      changes: [{ case: 'result-number', column: '0.3.8', from: 'fail', to: 'pass' }],
      newCases: [],
      removedCases: [],
    });
    const markdown = readFileSync(join(dir, 'matrix.md'), 'utf8');
    expect(markdown).toContain('Compared with the run of 2026-11-28T03:00:00.000Z (commit 3822a5fae1dd).');
    expect(markdown).toMatch(/- \[`result-number`\]\([^)]*cases\/result\.yaml#L3\): 0\.3\.8: fail → pass/);
    expect(JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')).since.changes).toHaveLength(1);
  });

  it("compares a directory's first run with the committed snapshot's history, and says so", () => {
    const fresh = mkdtempSync(join(tmpdir(), 'matrix-fresh-'));
    try {
      const snapshot = join(dir, 'history'); // two runs: 2026-11-28 and 2026-11-29, above
      const first = writeReports(fixtureRun({ date: '2026-11-30T03:00:00.000Z' }), fresh, snapshot);
      expect(first.since).toEqual({
        previous: { date: '2026-11-29T03:00:00.000Z', commit: LATER_COMMIT, snapshot: true },
        changes: [{ case: 'result-number', column: '0.3.8', from: 'pass', to: 'fail' }],
        newCases: [],
        removedCases: [],
      });
      expect(readFileSync(join(fresh, 'matrix.md'), 'utf8')).toContain(
        `No earlier run is recorded in this directory, so this one is compared with the committed snapshot in reports/: the run of 2026-11-29T03:00:00.000Z (commit ${LATER_COMMIT.slice(0, 12)}).`,
      );
      expect(readdirSync(join(fresh, 'history'))).toEqual(['2026-11-30T030000.json']);
      // The trend reads the same history as the comparison: the snapshot's two runs, then this one.
      const page = readFileSync(join(fresh, 'index.html'), 'utf8');
      expect(page).toContain('<figure class="trend"');
      expect(page).toContain("so the history starts with the committed snapshot's 2 runs in reports/history/.");
      expect(page).not.toContain('<p class="empty-note">Fewer than two runs are recorded in history/');
      // Once the directory has a run of its own, that is what the next one is compared with.
      const second = writeReports(fixtureRun({ date: '2026-12-01T01:00:00.000Z' }), fresh, snapshot);
      expect(second.since?.previous).toEqual({ date: '2026-11-30T03:00:00.000Z', commit: fixtureRun().run.commit });
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('refuses to render from a corrupt record rather than half-reading history', () => {
    writeFileSync(join(dir, 'history', '2026-11-30T000000.json'), '{"schemaVersion":1}');
    expect(() => writeReports(fixtureRun({ date: '2026-12-01T03:00:00.000Z' }), dir)).toThrow(
      '2026-11-30T000000.json: not a history record',
    );
  });
});

describe('history across the nightly', () => {
  const ROOT = join(import.meta.dirname, '..', '..');
  const schema = JSON.parse(readFileSync(join(ROOT, 'schema', 'history.schema.json'), 'utf8'));
  const validate = new Ajv2020({ strict: true }).compile(schema);

  it('still loads the records written before it, and they and a new record match schema/history.schema.json', () => {
    const older = readHistory(join(ROOT, 'reports', 'history'));
    expect(older.length).toBeGreaterThan(0);
    expect(older.every((entry) => entry.dirty === undefined)).toBe(true); // written before the field existed
    for (const entry of older) expect(validate(entry) ? [] : validate.errors).toEqual([]);
    expect(changesByRun(older)).toHaveLength(older.length);
    const fresh = toHistoryRecord(fixtureRun());
    expect(fresh.dirty).toBe(false);
    expect(validate(JSON.parse(JSON.stringify(fresh))) ? [] : validate.errors).toEqual([]);
  });

  it('calls a change between two runs of the same clean commit and release flaky, apart from the changes', () => {
    const at = (date: string, letters: string, commit: string | null, dirty?: boolean) => ({
      ...record(date, { a: letters }),
      commit,
      ...(dirty === undefined ? {} : { dirty }),
    });
    const same = changesOf([
      at('2026-01-01T00:00:00Z', 'ppp', 'abc1234', false),
      at('2026-01-02T00:00:00Z', 'ppf', 'abc1234', false),
    ]);
    expect(same[1]!.changes).toEqual([]);
    expect(same[1]!.flaky).toEqual([{ case: 'a', column: 'latest', from: 'pass', to: 'fail' }]);
    // Another commit, a dirty or unknown checkout, or another release is a real change.
    for (const [second, first] of [
      [at('2026-01-02T00:00:00Z', 'ppf', 'def5678', false), at('2026-01-01T00:00:00Z', 'ppp', 'abc1234', false)],
      [at('2026-01-02T00:00:00Z', 'ppf', 'abc1234', true), at('2026-01-01T00:00:00Z', 'ppp', 'abc1234', false)],
      [at('2026-01-02T00:00:00Z', 'ppf', 'abc1234'), at('2026-01-01T00:00:00Z', 'ppp', 'abc1234')],
    ] as const) {
      const [, changes] = changesOf([first, second]);
      expect([changes!.changes.length, changes!.flaky]).toEqual([1, undefined]);
    }
    const moved = changesOf([
      at('2026-01-01T00:00:00Z', 'ppp', 'abc1234', false),
      { ...at('2026-01-02T00:00:00Z', 'ppf', 'abc1234', false), columns: record('', {}, '0.5.7').columns },
    ]);
    expect(moved[1]!.changes).toHaveLength(1);
  });
});
