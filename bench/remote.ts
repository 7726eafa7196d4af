/**
 * The remote overhead alone: p50 and p95 of a trivial execution and of ten sequential tool calls,
 * over loopback to a daemon (`codemode-executor serve`), against the same IsolateExecutor in
 * process. Target: at most +1 ms p50 for a trivial execution. `npm run bench` prints the same
 * figures beside the rest; this script is the quick, remote-only view.
 *
 *   npx tsx bench/remote.ts [--runs 200] [--warmup 20]
 */
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { IsolateExecutor } from '../src/isolate/index.js';
import { connect } from '../src/remote/index.js';
import { startDaemon } from './daemon.js';
import { interleave } from './interleave.js';
import { runNative } from './ours.js';
import { ms, printTable, ratio, summarize } from './stats.js';
import { TARGETS, verdict } from './targets.js';
import { WORKLOADS } from './workloads.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '200' }, warmup: { type: 'string', default: '20' } },
});
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
if (!Number.isSafeInteger(RUNS) || RUNS < 1)
  throw new Error(`--runs must be a positive integer, got ${JSON.stringify(values.runs)}`);
if (!Number.isSafeInteger(WARMUP) || WARMUP < 0)
  throw new Error(`--warmup must be a non-negative integer, got ${JSON.stringify(values.warmup)}`);
const POOL = { maxWorkers: 1, spare: 1 };
const LOCAL = 'in-process';
const REMOTE = 'remote';

const local = new IsolateExecutor({ pool: POOL });
const daemon = await startDaemon(POOL);
try {
  const remote = await connect(daemon.url, { websocket: WebSocket });
  try {
    console.log(
      `remote overhead, ${RUNS} interleaved rounds after ${WARMUP} warm-up, pool ${JSON.stringify(POOL)} on both sides\n`,
    );
    const rows: string[][] = [];
    for (const workload of WORKLOADS) {
      const samples = await interleave(
        [
          { name: LOCAL, once: () => runNative(LOCAL, local, workload) },
          { name: REMOTE, once: () => runNative(REMOTE, remote, workload) },
        ],
        { warmup: WARMUP, rounds: RUNS },
      );
      const inProcess = summarize(samples.get(LOCAL)!);
      const overWire = summarize(samples.get(REMOTE)!);
      for (const stat of ['p50', 'p95'] as const) {
        const delta = overWire[stat] - inProcess[stat];
        const judged = workload.name === 'trivial' && stat === 'p50';
        rows.push([
          `${workload.label} ${stat}`,
          ms(inProcess[stat]),
          ms(overWire[stat]),
          ratio(overWire[stat] / inProcess[stat]),
          `${delta >= 0 ? '+' : ''}${ms(delta)}`,
          judged ? TARGETS.remoteTrivialDelta.text : '',
          judged ? verdict(TARGETS.remoteTrivialDelta, delta) : '',
        ]);
      }
    }
    printTable(['figure', 'in-process', 'remote', 'ratio', 'delta', 'target', 'met'], rows);
  } finally {
    await remote.dispose();
  }
} finally {
  await daemon.stop();
  await local.dispose();
}
