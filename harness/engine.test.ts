/**
 * The engine's bookkeeping on hand-made sides: opening with a preflight, a side that cannot start,
 * a side that breaks mid-run, bounded starts, close and abort, and what never reaches a side.
 * These test the runner, not any executor: the catalogue runs the real columns.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Boundary, Case, LoadedCase, Outcome } from './case-model.js';
import type { ColumnId } from './columns.js';
import { Engine, PREFLIGHT_CASE, printEachWarningOnce } from './engine.js';
import { MAX_CASES_TOGETHER } from './lanes.js';
import { LONG_WAITS } from './long-cases.js';
import type { Side } from './side-model.js';
import { texts } from './texts.js';

const boundaries = new Map<string, Boundary>();
const item = (id: string, fields: Partial<LoadedCase> = {}): LoadedCase => ({
  id,
  description: id,
  features: ['result'],
  code: 'async () => 1',
  expect: { result: 1 },
  file: 'cases/x.yaml',
  line: 1,
  ...fields,
});

/** Waits for `work` on a fake clock, moving it half a second at a time (the engine's waits are seconds long). */
async function settled<T>(work: Promise<T>): Promise<T> {
  let done = false;
  void work.finally(() => (done = true));
  while (!done) await vi.advanceTimersByTimeAsync(500);
  return work;
}

interface Script {
  startFails?: string;
  preflight?: Outcome;
  /** Cases whose run rejects; with `breaks`, the side stops answering afterwards. */
  failing?: string[];
  breaks?: boolean;
  /** Cases whose first run rejects and whose second answers, as a request a loaded wrangler dev dropped. */
  dropsOnce?: string[];
  /** How long a case takes, by id (ms); the others answer at once. */
  takes?: Record<string, number>;
  /**
   * Cases whose runs reject as wrangler dev does when its workerd died mid-request, by id: how many
   * runs do. After each, the next two preflights fail, as while wrangler starts workerd again.
   */
  restarts?: Record<string, number>;
  /** Cases whose first run (on any process of the column) kills the side for good, as a crash wrangler does not recover from. */
  dies?: string[];
  /** How many starts after the first print their ready line and then answer nothing, as a wrangler dev that died at once. */
  deadStarts?: number;
}

function fakes(scripts: Partial<Record<ColumnId, Script>> = {}) {
  const runs: string[] = [];
  const disposed: string[] = [];
  let starting = 0;
  let mostAtOnce = 0;
  /** Cases running on any side at once, and how many others ran when each case started. */
  let running = 0;
  const besideAtStart: Record<string, number> = {};
  const died = new Set<string>();
  const dropped = new Set<string>();
  const starts: string[] = [];
  const starter = async (name: ColumnId): Promise<Side> => {
    starts.push(name);
    const script = scripts[name] ?? {};
    starting += 1;
    mostAtOnce = Math.max(mostAtOnce, starting);
    await new Promise((resolve) => setTimeout(resolve, 5));
    starting -= 1;
    if (script.startFails) throw new Error(script.startFails);
    const startOfColumn = starts.filter((started) => started === name).length;
    let broken = startOfColumn > 1 && startOfColumn <= 1 + (script.deadStarts ?? 0);
    let restarting = 0;
    const restartsLeft = { ...script.restarts };
    return {
      name,
      async run(testCase: Case) {
        if (testCase.id === PREFLIGHT_CASE.id) {
          if (broken) throw new Error('connection refused');
          if (restarting > 0) {
            restarting -= 1;
            throw new Error('HTTP 503: the worker is starting');
          }
          return script.preflight ?? { result: 42, logs: [] };
        }
        runs.push(`${name}:${testCase.id}`);
        besideAtStart[testCase.id] = running;
        running += 1;
        const takes = script.takes?.[testCase.id];
        try {
          if (takes !== undefined) await new Promise((resolve) => setTimeout(resolve, takes));
        } finally {
          running -= 1;
        }
        if (script.dies?.includes(testCase.id) && !died.has(testCase.id)) {
          died.add(testCase.id);
          broken = true;
          throw new Error('HTTP 503: Your worker restarted mid-request. Please try sending the request again.');
        }
        if ((restartsLeft[testCase.id] ?? 0) > 0) {
          restartsLeft[testCase.id]! -= 1;
          restarting = 2;
          throw new Error('HTTP 503: Your worker restarted mid-request. Please try sending the request again.');
        }
        if (script.dropsOnce?.includes(testCase.id) && !dropped.has(testCase.id)) {
          dropped.add(testCase.id);
          throw new Error('fetch failed: other side closed');
        }
        if (script.failing?.includes(testCase.id)) {
          if (script.breaks) broken = true;
          throw new Error(`HTTP 500 on ${testCase.id}`);
        }
        return { result: 1, logs: [] };
      },
      output: () => 'wrangler said goodbye',
      async dispose() {
        disposed.push(name);
      },
    };
  };
  return { starter, runs, disposed, starts, besideAtStart, mostAtOnce: () => mostAtOnce };
}

describe('Engine', () => {
  it('opens a column once, checks it answers 6 * 7, runs cases, and stops it at the end', async () => {
    const fake = fakes();
    const engine = new Engine(boundaries, fake.starter);
    expect(await engine.open('ours')).toBeUndefined();
    expect((await engine.cell(item('a'), 'ours')).cell).toEqual({ case: 'a', column: 'ours', status: 'pass' });
    expect((await engine.cell(item('b', { expect: { result: 2 } }), 'ours')).cell.status).toBe('fail');
    await engine.closeAll();
    expect([fake.runs, fake.disposed]).toEqual([['ours:a', 'ours:b'], ['ours']]);
  });

  it('runs cells asked at once in order, a long one waiting beside the next, and says which it waits on', async () => {
    const fake = fakes({ ours: { takes: { long: 2_600, first: 50 } } });
    const engine = new Engine(boundaries, fake.starter);
    const settled: string[] = [];
    // Cases that involve time, so each holds the lane alone until it runs long.
    const asked = ['first', 'long', 'after'].map((id) =>
      engine.cell(item(id, { timing: true }), 'ours').then(({ cell }) => settled.push(`${cell.case} ${cell.status}`)),
    );
    expect(fake.runs).toEqual([]); // the column opens first
    await engine.whenLaneFree('ours');
    expect(engine.waitingOn('ours')).toEqual(['long']);
    await Promise.all(asked);
    expect(fake.runs).toEqual(['ours:first', 'ours:long', 'ours:after']);
    expect(settled).toEqual(['first pass', 'after pass', 'long pass']);
    expect(engine.waitingOn('ours')).toEqual([]);
    // A later column can start it first, after the cases known to wait long.
    expect([...engine.knownLong]).toEqual([...LONG_WAITS, 'long']);
    await engine.closeAll();
  });

  it('runs cells of our executor that involve no time a few at once, in the order asked, and one that involves time alone', async () => {
    const takes = Object.fromEntries(['a', 'b', 'c', 'd', 'timed', 'e'].map((id) => [id, 100]));
    const fake = fakes({ ours: { takes } });
    const engine = new Engine(boundaries, fake.starter);
    const asked = ['a', 'b', 'c', 'd', 'timed', 'e'].map((id) =>
      engine.cell(item(id, id === 'timed' ? { options: { timeout: 500 } } : {}), 'ours'),
    );
    await Promise.all(asked);
    expect(fake.runs).toEqual(['ours:a', 'ours:b', 'ours:c', 'ours:d', 'ours:timed', 'ours:e']);
    // a, b and c share the lane (MAX_CASES_TOGETHER); d starts when one of them is done.
    expect([fake.besideAtStart.a, fake.besideAtStart.b, fake.besideAtStart.c]).toEqual([0, 1, 2]);
    expect(fake.besideAtStart.d).toBe(MAX_CASES_TOGETHER - 1);
    // The timed case starts once the lane is empty, and e only after it.
    expect([fake.besideAtStart.timed, fake.besideAtStart.e]).toEqual([0, 0]);
    await engine.closeAll();
  });

  it('runs cells under wrangler dev one at a time, whether or not they involve time', async () => {
    const ids = ['ref-a', 'ref-b', 'ref-c'];
    const fake = fakes({ latest: { takes: Object.fromEntries(ids.map((id) => [id, 100])) } });
    const engine = new Engine(boundaries, fake.starter);
    await Promise.all(ids.map((id) => engine.cell(item(id), 'latest')));
    expect(ids.map((id) => fake.besideAtStart[id])).toEqual([0, 0, 0]);
    await engine.closeAll();
  });

  it('makes every cell of a column that did not start an infra-error with the reason, and runs nothing', async () => {
    const fake = fakes({ latest: { startFails: 'wrangler dev exited before it was ready' } });
    const engine = new Engine(boundaries, fake.starter);
    expect(await engine.open('latest')).toBe('wrangler dev exited before it was ready');
    expect((await engine.cell(item('a'), 'latest')).cell).toEqual({
      case: 'a',
      column: 'latest',
      status: 'infra-error',
      reason: texts.cell.columnUnavailable('wrangler dev exited before it was ready'),
    });
    expect(fake.runs).toEqual([]);
  });

  it('treats a side that fails its preflight as not open, quotes its output, and still stops it', async () => {
    const fake = fakes({ ours: { preflight: { threw: 'workerd exited' } } });
    const engine = new Engine(boundaries, fake.starter);
    expect(await engine.open('ours')).toBe(
      texts.withOutput(texts.preflight('ours', '{"threw":"workerd exited"}'), 'wrangler said goodbye'),
    );
    expect(fake.disposed).toEqual(['ours']);
  });

  it('runs a failed request once more and keeps the column; one that no longer answers is started afresh once, then fails every later cell at once', async () => {
    const fake = fakes({
      ours: { failing: ['flaky'], dropsOnce: ['dropped'] },
      latest: { failing: ['wedges'], breaks: true },
    });
    const engine = new Engine(boundaries, fake.starter);
    expect((await engine.cell(item('dropped'), 'ours')).cell.status).toBe('pass');
    expect((await engine.cell(item('flaky'), 'ours')).cell).toMatchObject({
      status: 'infra-error',
      // Both attempts' reasons, and what the column printed last.
      reason: texts.withOutput(
        texts.cell.failedAgain('HTTP 500 on flaky', 'HTTP 500 on flaky'),
        'wrangler said goodbye',
      ),
    });
    expect((await engine.cell(item('after'), 'ours')).cell.status).toBe('pass');
    expect((await engine.cell(item('wedges'), 'latest')).cell.status).toBe('infra-error');
    const later = (await engine.cell(item('later'), 'latest')).cell;
    expect(later.status).toBe('infra-error');
    expect(later.reason).toMatch(/^the column broke at case "wedges": HTTP 500 on wedges\n/);
    // The column that stopped answering was started afresh and the case run again; it wedged that one too.
    expect(fake.runs).toEqual([
      'ours:dropped',
      'ours:dropped',
      'ours:flaky',
      'ours:flaky',
      'ours:after',
      'latest:wedges',
      'latest:wedges',
    ]);
    await engine.closeAll();
  });

  it("runs a case once more when wrangler dev's workerd restarted under it and answers again, but not twice", async () => {
    const fake = fakes({ latest: { restarts: { once: 1, twice: 2 } } });
    const engine = new Engine(boundaries, fake.starter);
    expect((await engine.cell(item('once'), 'latest')).cell).toMatchObject({ status: 'pass' });
    const twice = (await engine.cell(item('twice'), 'latest')).cell;
    expect(twice).toMatchObject({ status: 'infra-error' });
    expect(twice.reason).toMatch(/Your worker restarted mid-request/);
    // The column answers again afterwards, so it is not broken.
    expect((await engine.cell(item('after'), 'latest')).cell.status).toBe('pass');
    expect(fake.runs).toEqual(['latest:once', 'latest:once', 'latest:twice', 'latest:twice', 'latest:after']);
    await engine.closeAll();
  });

  it('starts a column afresh, once, when its process died under a case and does not answer again', async () => {
    // The engine gives the dead column its whole wait to answer again (20 s): on a fake clock.
    vi.useFakeTimers();
    try {
      const fake = fakes({ latest: { dies: ['crashes'] } });
      const engine = new Engine(boundaries, fake.starter);
      expect((await settled(engine.cell(item('crashes'), 'latest'))).cell.status).toBe('pass');
      expect((await settled(engine.cell(item('after'), 'latest'))).cell.status).toBe('pass');
      expect(fake.starts).toEqual(['latest', 'latest']);
      expect(fake.disposed).toEqual(['latest']);
      expect(fake.runs).toEqual(['latest:crashes', 'latest:crashes', 'latest:after']);
      await settled(engine.closeAll());
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts a dead column once more when its fresh start dies at once, and runs the case on the one that answers', async () => {
    // As above, on a fake clock; the first fresh start prints its ready line and answers nothing.
    vi.useFakeTimers();
    try {
      const fake = fakes({ latest: { dies: ['crash'], deadStarts: 1 } });
      const engine = new Engine(boundaries, fake.starter);
      expect((await settled(engine.cell(item('crash'), 'latest'))).cell.status).toBe('pass');
      expect((await settled(engine.cell(item('after'), 'latest'))).cell.status).toBe('pass');
      expect(fake.starts).toEqual(['latest', 'latest', 'latest']);
      expect(fake.disposed).toEqual(['latest', 'latest']);
      await settled(engine.closeAll());
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends nothing for an unsupported cell', async () => {
    const fake = fakes();
    const engine = new Engine(boundaries, fake.starter);
    const { cell } = await engine.cell(item('spin', { unsafeOnReference: 'a spin wedges wrangler dev' }), 'latest');
    expect(cell.status).toBe('unsupported');
    expect(fake.runs).toEqual([]);
  });

  it('starts at most two columns at once', async () => {
    const fake = fakes();
    const engine = new Engine(boundaries, fake.starter);
    await engine.openAll(['ours', 'ours-remote', '0.2.2', '0.3.8', 'latest'], 2);
    expect(fake.mostAtOnce()).toBe(2);
    await engine.closeAll();
    expect(fake.disposed.sort()).toEqual(['0.2.2', '0.3.8', 'latest', 'ours', 'ours-remote']);
  });

  it('after close or abort, runs nothing more and says why', async () => {
    const fake = fakes();
    const engine = new Engine(boundaries, fake.starter);
    await engine.open('ours');
    await engine.close('ours');
    expect((await engine.cell(item('a'), 'ours')).cell).toMatchObject({
      status: 'infra-error',
      reason: texts.cell.columnClosed,
    });
    await engine.abort();
    expect(engine.isAborted).toBe(true);
    expect(await engine.open('latest')).toBe(texts.cell.interrupted);
    expect(fake.runs).toEqual([]);
  });

  it('prints each distinct warning once per process', () => {
    const inner = vi.fn();
    const target = { warn: inner };
    printEachWarningOnce(target);
    printEachWarningOnce(target); // installing twice must not wrap twice
    target.warn('deprecated, once');
    target.warn('deprecated, once');
    target.warn('another');
    expect(inner.mock.calls).toEqual([['deprecated, once'], ['another']]);
  });
});
