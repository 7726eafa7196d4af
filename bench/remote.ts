/**
 * The remote overhead: p50 and p95 of a trivial execution and of ten sequential tool calls, over
 * loopback to a daemon (`codemode-executor serve`), against the same IsolateExecutor in process.
 * Target: at most +1 ms p50 for a trivial execution.
 *
 *   npx tsx bench/remote.ts [--runs 200] [--warmup 20]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { IsolateExecutor } from '../src/isolate/index.js';
import { createEnvelopeDispatch, type ExecuteRequest, type Executor } from '../src/protocol/index.js';
import { connect, type WebSocketConstructor } from '../src/remote/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, warmup: { type: 'string', default: '20' } } });
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
const POOL = { maxWorkers: 1 };

function trivial(): ExecuteRequest {
  return { code: 'async () => 42' };
}

function tenToolCalls(): ExecuteRequest {
  const dispatch = createEnvelopeDispatch({ math: (_tool, args) => (args[0] as number) + 1 }, { active: true });
  return {
    code: 'async () => { let n = 0; for (let i = 0; i < 10; i++) n = await math.inc(n); return n }',
    providers: [{ name: 'math', tools: ['inc'] }],
    dispatch,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Summary {
  p50: number;
  p95: number;
}

async function timeOne(executor: Executor, build: () => ExecuteRequest): Promise<number> {
  const request = build();
  const started = performance.now();
  const result = await executor.execute(request);
  const elapsed = performance.now() - started;
  if (result.error !== undefined) throw new Error(`benchmark execution failed: ${result.error}`);
  return elapsed;
}

function summarize(samples: number[]): Summary {
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

/**
 * Both executors, one run each in turn: on a shared, noisy machine the load drifts, and
 * interleaving lets both sides see the same drift.
 */
async function measure(local: Executor, remote: Executor, build: () => ExecuteRequest): Promise<[Summary, Summary]> {
  for (let i = 0; i < WARMUP; i++) {
    await timeOne(local, build);
    await timeOne(remote, build);
  }
  const inProcess: number[] = [];
  const overWire: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    inProcess.push(await timeOne(local, build));
    overWire.push(await timeOne(remote, build));
  }
  return [summarize(inProcess), summarize(overWire)];
}

async function startDaemon(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/cli.ts', 'serve', '--port', '0', '--max-workers', String(POOL.maxWorkers)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, CODEMODE_EXECUTOR_TOKEN: '' },
  });
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const match = /^listening on (\S+)$/m.exec(buffer);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error('the daemon exited before listening')));
  });
  child.stdout.resume();
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const format = (ms: number): string => ms.toFixed(2).padStart(7);

const local = new IsolateExecutor({ pool: POOL });
const daemon = await startDaemon();
const remote = await connect(daemon.url, { websocket: WebSocket as unknown as WebSocketConstructor });
try {
  console.log(`remote overhead, ${RUNS} runs after ${WARMUP} warm-up, pool ${JSON.stringify(POOL)} on both sides (ms)`);
  console.log('workload            in-process p50    p95 | remote p50    p95 | p50 ratio  p50 delta');
  let trivialDelta = NaN;
  for (const [name, build] of [['trivial', trivial], ['10 tool calls', tenToolCalls]] as const) {
    const [inProcess, overWire] = await measure(local, remote, build);
    const delta = overWire.p50 - inProcess.p50;
    if (name === 'trivial') trivialDelta = delta;
    console.log(
      `${name.padEnd(19)} ${format(inProcess.p50)}        ${format(inProcess.p95)} | ${format(overWire.p50)} ${format(overWire.p95)} | ${(overWire.p50 / inProcess.p50).toFixed(2).padStart(8)}x ${format(delta)}`,
    );
  }
  console.log(`target: trivial p50 delta <= 1 ms: ${trivialDelta <= 1 ? 'met' : 'NOT met'} (${trivialDelta.toFixed(2)} ms)`);
} finally {
  await remote.dispose();
  await daemon.stop();
  await local.dispose();
}
