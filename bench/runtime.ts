/**
 * The runtime phase: upstream's own runtime (`createCodemodeRuntime`) in Node over
 * `openDurableState` and `CodemodeExecutor(new IsolateExecutor())`, beside the same runtime in a
 * Durable Object under `wrangler dev` over `DynamicWorkerExecutor` (the `latest` column), in the
 * same rounds: an execute with three reads, a pause then an approve, and a snippet run. The
 * reference is driven over HTTP, one POST per handle call, so its figures are read net of that
 * many bare round trips. Ours runs twice over: on the default durability (every commit waits for
 * the disk) and on `durability: 'process-crash'` (commits survive the process, not the machine).
 * Then the state a completed execution leaves on disk, ours only.
 */
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowConnector } from '../harness/flow-model.js';
import { nodeFlowSessions } from '../harness/flow-node.js';
import type { FlowSession } from '../harness/flows.js';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { type Contender, interleave } from './interleave.js';
import type { ReferencePeer } from './reference-peer.js';
import { summarize } from './stats.js';
import { TARGETS, verdict } from './targets.js';

const CONNECTORS: FlowConnector[] = [
  { name: 'store', tools: { get: { returns: { a: 1 } }, put: { returns: { id: 7 }, approval: true } } },
];
const THREE_READS = 'async () => [await store.get({ k: 1 }), await store.get({ k: 2 }), await store.get({ k: 3 })]';
const GATED_WRITE = 'async () => await store.put({ title: "x" })';
const SNIPPET = 'bench-read';
/** Completed executions measured for the state size; fewer than the 50 the runtime keeps. */
const STATE_SAMPLES = 40;

interface RuntimeWorkload {
  name: string;
  label: string;
  /** Handle calls per operation: one POST each on the reference. */
  calls: number;
  once(session: FlowSession): Promise<void>;
}

async function call(session: FlowSession, call: Parameters<FlowSession['step']>[0]['call']) {
  const outcome = await session.step({ connectors: CONNECTORS, call });
  if (outcome.threw !== undefined) throw new Error(`runtime bench: ${JSON.stringify(call)} threw ${outcome.threw}`);
  return outcome.value as { status?: string; executionId?: string };
}

function expectStatus(value: { status?: string }, status: string, what: string): void {
  if (value.status !== status) throw new Error(`runtime bench: ${what} gave ${JSON.stringify(value)}, not ${status}`);
}

const WORKLOADS: RuntimeWorkload[] = [
  {
    name: 'reads',
    label: 'an execute with three reads',
    calls: 1,
    async once(session) {
      expectStatus(await call(session, { execute: THREE_READS }), 'completed', 'three reads');
    },
  },
  {
    name: 'approve',
    label: 'a pause, then an approve',
    calls: 2,
    async once(session) {
      const paused = await call(session, { execute: GATED_WRITE });
      expectStatus(paused, 'paused', 'the gated write');
      expectStatus(await call(session, { approve: paused.executionId! }), 'completed', 'the approve');
    },
  },
  {
    name: 'snippet',
    label: 'a snippet run (a nested execution)',
    calls: 1,
    async once(session) {
      expectStatus(await call(session, { run: SNIPPET }), 'completed', 'the snippet run');
    },
  },
];

/** Saves the snippet the snippet workload runs. */
async function prepare(session: FlowSession): Promise<void> {
  const source = await call(session, { execute: THREE_READS });
  await call(session, { saveSnippet: SNIPPET, from: source.executionId! });
}

export interface RuntimeResults {
  reference: string;
  rows: Array<{
    label: string;
    ours: number;
    reference: number;
    roundTrips: number;
    ratio: number;
    /** Ours on `durability: 'process-crash'`, and its ratio. */
    oursProcessCrash: number;
    ratioProcessCrash: number;
  }>;
  /** Bytes of state on disk per completed execution of each workload. */
  stateBytes: Array<{ label: string; bytes: number }>;
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? directoryBytes(path) : statSync(path).size;
  }
  return total;
}

/**
 * The state one completed operation adds, averaged over STATE_SAMPLES, on a state of its own.
 * Measured closed: SQLite folds its write-ahead log into the database as the last connection
 * closes, and until then the log grows by whole pages per commit (over 100 KiB per execution),
 * which says how much is written, not how much is kept.
 */
/** A runtime session on a fresh state of its own, with `durability`; closing it removes the state. */
async function sessionWith(executor: CodemodeExecutor, durability: 'process-crash'): Promise<FlowSession> {
  const upstream = await import('@cloudflare/codemode');
  const [{ openDurableState }, { runHostStep }] = await Promise.all([
    import('../src/durable/index.js'),
    import('../harness/flow-host.js'),
  ]);
  const path = await mkdtemp(join(tmpdir(), 'bench-runtime-durability-'));
  const state = await openDurableState({ path, exports: { CodemodeRuntime: upstream.CodemodeRuntime }, durability });
  return {
    step: (request) => runHostStep(upstream as never, state, executor, request),
    restart: async () => {},
    close: async () => {
      try {
        await state.close();
      } finally {
        await rm(path, { recursive: true, force: true });
      }
    },
  };
}

async function stateBytesPer(workload: RuntimeWorkload, executor: CodemodeExecutor): Promise<number> {
  const upstream = await import('@cloudflare/codemode');
  const [{ openDurableState }, { runHostStep }] = await Promise.all([
    import('../src/durable/index.js'),
    import('../harness/flow-host.js'),
  ]);
  const path = await mkdtemp(join(tmpdir(), 'bench-runtime-state-'));
  const exports = { CodemodeRuntime: upstream.CodemodeRuntime };
  const session = async (work: (session: FlowSession) => Promise<void>) => {
    const state = await openDurableState({ path, exports });
    try {
      await work({
        step: (request) => runHostStep(upstream as never, state, executor, request),
        restart: async () => {},
        close: async () => {},
      });
    } finally {
      await state.close();
    }
  };
  try {
    await session(prepare);
    const before = directoryBytes(path);
    await session(async (opened) => {
      for (let i = 0; i < STATE_SAMPLES; i += 1) await workload.once(opened);
    });
    return (directoryBytes(path) - before) / STATE_SAMPLES;
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

export async function measureRuntime(
  plan: { warmup: number; rounds: number },
  reference: ReferencePeer,
  track: (executor: IsolateExecutor) => void,
): Promise<RuntimeResults> {
  if (!reference.openFlow) throw new Error('runtime bench: the reference column hosts no runtime');
  // Default pool: a snippet's nested run needs a second process while the outer one waits.
  const native = new IsolateExecutor();
  track(native);
  const executor = new CodemodeExecutor(native);
  const flow = { id: 'bench-runtime', description: 'bench', features: ['runtime'], connectors: CONNECTORS, steps: [] };
  const ours = await nodeFlowSessions(async () => executor)(flow);
  const oursProcessCrash = await sessionWith(executor, 'process-crash');
  const theirs = await reference.openFlow(flow);
  try {
    await Promise.all([prepare(ours), prepare(oursProcessCrash), prepare(theirs)]);
    const rows: RuntimeResults['rows'] = [];
    for (const workload of WORKLOADS) {
      const contenders: Contender[] = [
        { name: 'ours', once: () => workload.once(ours) },
        { name: 'oursProcessCrash', once: () => workload.once(oursProcessCrash) },
        { name: 'reference', once: () => workload.once(theirs) },
        { name: 'roundTrip', once: () => reference.roundTrip() },
      ];
      const samples = await interleave(contenders, plan);
      const p50 = (name: string) => summarize(samples.get(name) ?? []).p50;
      const net = p50('reference') - workload.calls * p50('roundTrip');
      rows.push({
        label: workload.label,
        ours: p50('ours'),
        reference: p50('reference'),
        roundTrips: workload.calls * p50('roundTrip'),
        ratio: p50('ours') / net,
        oursProcessCrash: p50('oursProcessCrash'),
        ratioProcessCrash: p50('oursProcessCrash') / net,
      });
    }
    const stateBytes: RuntimeResults['stateBytes'] = [];
    for (const workload of WORKLOADS.slice(0, 2))
      stateBytes.push({ label: workload.label, bytes: await stateBytesPer(workload, executor) });
    return { reference: reference.name, rows, stateBytes };
  } finally {
    await Promise.all([ours.close(), oursProcessCrash.close(), theirs.close()]);
  }
}

export function printRuntime(results: RuntimeResults): void {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(`\nRuntime: upstream's runtime in Node on ours, beside ${results.reference} in a Durable Object`);
  console.log('  p50 per operation; the reference net of one bare HTTP round trip per handle call');
  for (const row of results.rows) {
    const target = TARGETS.runtimeVsReference;
    console.log(
      `  ${row.label.padEnd(36)} ours ${ms(row.ours).padStart(9)}  reference ${ms(row.reference).padStart(9)} ` +
        `(HTTP ${ms(row.roundTrips)})  ratio ${row.ratio.toFixed(2)}x  target ${target.text}: ${verdict(target, row.ratio)}`,
    );
    console.log(
      `  ${''.padEnd(36)} ours on durability 'process-crash' ${ms(row.oursProcessCrash).padStart(9)}  ` +
        `ratio ${row.ratioProcessCrash.toFixed(2)}x: ${verdict(target, row.ratioProcessCrash)}`,
    );
  }
  console.log(`  state on disk per completed execution (ours, ${STATE_SAMPLES} samples each):`);
  for (const { label, bytes } of results.stateBytes)
    console.log(`    ${label.padEnd(34)} ${(bytes / 1024).toFixed(1)} KiB`);
}
