/**
 * `npm run stress:open`: several processes open the same fresh paths at the same moments, each
 * writing acknowledged rows into every state it holds and keeping it open to the end. Then it
 * counts what the single-writer rule forbids:
 *
 * - two-writer events: a path more than one process held at once (none lets go before the end);
 * - lost acknowledged rows: rows a holder's `exec` returned for, missing from the path afterwards;
 * - wrong refusals: a refused open whose reason is not STATE_ALREADY_OPEN (such as ENOENT or
 *   "database is locked"), paths that no process got, and holders whose writes failed.
 *
 * It prints the counts and exits 1 unless all are 0. Bounded: a fixed number of processes, rounds
 * and paths, and a deadline (STRESS_OPEN_DEADLINE_MS, 60 s by default) past which it fails.
 * Each worker is this file, run as `worker`; docs/durable-state.md describes the check.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type DurableState, openDurableState } from '../src/durable/index.js';

const WORKERS = 5;
const ROUNDS = 2;
const PATHS_PER_ROUND = 30;
/** Between two paths' opening moments: time for every worker to finish the last one's writes. */
const STEP_MS = 120;
const ROWS_PER_HOLDER = 20;
const DEADLINE_MS = Number(process.env.STRESS_OPEN_DEADLINE_MS ?? 60_000);

/** What a worker reports for one path. */
type Outcome =
  | { path: string; held: true; acknowledged: number; writeError?: string }
  | { path: string; held: false; code: string; error: string };

const pathName = (root: string, round: number, index: number) => join(root, `round-${round}`, `path-${index}`);

async function worker(root: string): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  const [go] = (await once(lines, 'line')) as [string];
  const startAt = Number(go);
  const held: DurableState[] = [];
  const outcomes: Outcome[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let index = 0; index < PATHS_PER_ROUND; index++) {
      const slot = startAt + (round * PATHS_PER_ROUND + index) * STEP_MS;
      // A few milliseconds of spread, different in each process, to vary who gets where first.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, slot - Date.now()) + Math.random() * 4));
      const path = pathName(root, round, index);
      let state: DurableState;
      try {
        state = await openDurableState({ path, exports: {}, durability: 'process-crash' });
      } catch (error) {
        outcomes.push({ path, held: false, code: String((error as { code?: unknown }).code), error: String(error) });
        continue;
      }
      held.push(state);
      let acknowledged = 0;
      try {
        // Not IF NOT EXISTS: a path is fresh, so a table already there is another holder's.
        state.storage.sql.exec('CREATE TABLE rows (writer INTEGER, n INTEGER)');
        for (let n = 1; n <= ROWS_PER_HOLDER; n++) {
          state.storage.sql.exec('INSERT INTO rows VALUES (?, ?)', process.pid, n);
          acknowledged = n;
        }
        outcomes.push({ path, held: true, acknowledged });
      } catch (error) {
        outcomes.push({ path, held: true, acknowledged, writeError: String(error) });
      }
    }
  }
  // Every state stays held until each path has been tried: a second holder of any is a two-writer event.
  for (const state of held) await state.close();
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
  lines.close();
}

async function rowsByWriter(path: string): Promise<Map<number, number>> {
  const state = await openDurableState({ path, exports: {} });
  try {
    const rows = state.storage.sql.exec('SELECT writer, count(*) AS n FROM rows GROUP BY writer').toArray();
    return new Map(rows.map((row) => [row.writer as number, row.n as number]));
  } catch {
    return new Map();
  } finally {
    await state.close();
  }
}

async function coordinate(): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), 'stress-open-'));
  const children: ChildProcess[] = [];
  const deadline = setTimeout(() => {
    console.error(`stress:open: not done within ${DEADLINE_MS} ms (STRESS_OPEN_DEADLINE_MS); failing`);
    for (const child of children) child.kill('SIGKILL');
    process.exit(1);
  }, DEADLINE_MS);
  try {
    const reports = Array.from({ length: WORKERS }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'worker', root], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
      const lines = createInterface({ input: child.stdout! });
      const ready = once(lines, 'line');
      const report = (async () => {
        let last = '';
        for await (const line of lines) last = line;
        const [code] = (await once(child, 'exit').catch(() => [null])) as [number | null];
        if (child.exitCode !== 0 && code !== 0) throw new Error(`a worker exited ${child.exitCode ?? code}`);
        return { pid: child.pid as number, outcomes: JSON.parse(last) as Outcome[] };
      })();
      return { child, ready, report };
    });
    await Promise.all(reports.map((each) => each.ready));
    const startAt = Date.now() + 200;
    for (const { child } of reports) child.stdin!.end(`${startAt}\n`);
    const results = await Promise.all(reports.map((each) => each.report));

    let twoWriterEvents = 0;
    let lostRows = 0;
    let wrongRefusals = 0;
    let unheldPaths = 0;
    let failedWrites = 0;
    const examples = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      for (let index = 0; index < PATHS_PER_ROUND; index++) {
        const path = pathName(root, round, index);
        const holders: { pid: number; acknowledged: number }[] = [];
        for (const { pid, outcomes } of results) {
          const outcome = outcomes.find((each) => each.path === path);
          if (outcome?.held) {
            holders.push({ pid, acknowledged: outcome.acknowledged });
            if (outcome.writeError !== undefined) {
              failedWrites++;
              if (examples.size < 5) examples.add(outcome.writeError);
            }
          } else if (outcome && outcome.code !== 'STATE_ALREADY_OPEN') {
            wrongRefusals++;
            if (examples.size < 5) examples.add(outcome.error);
          }
        }
        if (holders.length > 1) twoWriterEvents += holders.length - 1;
        if (holders.length === 0) unheldPaths++;
        const found = await rowsByWriter(path);
        for (const { pid, acknowledged } of holders) lostRows += Math.max(0, acknowledged - (found.get(pid) ?? 0));
      }
    }
    const paths = ROUNDS * PATHS_PER_ROUND;
    console.log(
      `stress:open: ${WORKERS} processes × ${paths} fresh paths: ${twoWriterEvents} two-writer events, ` +
        `${lostRows} lost acknowledged rows, ${wrongRefusals} refusals other than STATE_ALREADY_OPEN, ` +
        `${unheldPaths} paths nobody held, ${failedWrites} holders whose writes failed`,
    );
    for (const example of examples) console.log(`  e.g. ${example}`);
    return twoWriterEvents + lostRows + wrongRefusals + unheldPaths + failedWrites === 0 ? 0 : 1;
  } finally {
    clearTimeout(deadline);
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'worker') await worker(process.argv[3] as string);
else process.exitCode = await coordinate();
