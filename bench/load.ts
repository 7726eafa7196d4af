/**
 * The load phase: many programs at once, as an agent host with many users sends them. Each side
 * gets N programs together, each making three sequential 200 ms tool calls (ideally 600 ms).
 *
 * - Ours (the dialect over an IsolateExecutor with default options, a fresh one per N: its pool
 *   grows from nothing in the cold burst, and the warm bursts find it grown) against the reference
 *   (one POST per program to wrangler dev), in rounds that alternate the two sides.
 * - Trivial throughput at N = 400 on both sides.
 * - Ours only: N = 1000 (the reference does not hold at 400); the same bursts with 4 spinning
 *   programs mixed in (cpuTimeout 1 s; a spin wedges wrangler dev), beside bursts without them in
 *   the same rounds; and the pool's PSS while N programs run at once.
 * Each burst on ours also reads the host's CPU and the pool's peak RSS (burst.ts).
 */
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { createEnvelopeDispatch } from '../src/protocol/dispatch.js';
import { formatCpuTimeout } from '../src/protocol/texts.js';
import { type Burst, burst, describeFailures } from './burst.js';
import { runDialect } from './ours.js';
import { note } from './progress.js';
import type { ReferencePeer } from './reference-peer.js';
import { THREE_WAITS, TRIVIAL_WORKLOAD, type Workload } from './workloads.js';

export const LOAD_SIZES = [10, 100, 400] as const;
/** Ours only, after wrangler dev is stopped: the reference does not hold at 400. */
export const OURS_ONLY_LOAD_SIZES = [1000] as const;
export type LoadSize = (typeof LOAD_SIZES)[number] | (typeof OURS_ONLY_LOAD_SIZES)[number];
type SpinMixSize = (typeof LOAD_SIZES)[number];
const THROUGHPUT_SIZE = 400;
export const SPINNERS = 4;
export const SPIN_CPU_BOUND_MS = 1_000;

export interface LoadPlan {
  /** Measured bursts per side and N (after one untimed burst that warms it). */
  loadRounds: number;
}

export interface LoadFigures {
  n: LoadSize;
  /** Ours: the first burst on a fresh executor, whose pool grows from nothing. */
  oursCold: Burst;
  oursWarm: Burst[];
  /** Empty for the sizes run on ours only. */
  reference: Burst[];
  /** The pool after the bursts: its bound and how many processes it started. */
  maxWorkers: number;
  spawns: number;
}

/**
 * N native programs that each wait on a tool until as many as can run at once (N, at most
 * maxWorkers, and as many as the memory budget admits) are waiting; `whileAllWait` runs then, and
 * the gate opens.
 */
async function holdAtOnce(executor: IsolateExecutor, n: number, whileAllWait: () => void): Promise<void> {
  const running = Math.min(n, executor.stats().maxWorkers);
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    clearInterval(budgetWatch);
    whileAllWait();
    open();
  };
  // The budget stopped the pool short of `running`: programs queue, none starts, all others wait.
  const budgetWatch = setInterval(() => {
    const { starting, queued, states } = executor.stats();
    if (arrived > 0 && starting === 0 && queued > 0 && states.busy === arrived) release();
  }, 100);
  const dispatch = createEnvelopeDispatch(
    {
      gate: async () => {
        if (++arrived === running) release();
        await opened;
        return 1;
      },
    },
    { active: true },
  );
  const outcomes = await Promise.all(
    Array.from({ length: n }, () =>
      executor.execute({ code: 'async () => gate.wait()', providers: [{ name: 'gate', tools: ['wait'] }], dispatch }),
    ),
  ).finally(() => clearInterval(budgetWatch));
  const wrong = outcomes.filter((outcome) => outcome.result !== 1).length;
  if (wrong > 0) throw new Error(`${wrong} of ${n} gated programs did not return 1: ${JSON.stringify(outcomes[0])}`);
  while (executor.stats().starting > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Grows the pool to as many members as N programs at once need: the warm bursts find it grown. */
const growPool = (executor: IsolateExecutor, n: number) => holdAtOnce(executor, n, () => {});

/** A fresh IsolateExecutor with default options, and the dialect over it. */
function defaultExecutor(track: (executor: IsolateExecutor) => void): {
  executor: IsolateExecutor;
  dialect: CodemodeExecutor;
} {
  const executor = new IsolateExecutor();
  track(executor);
  return { executor, dialect: new CodemodeExecutor(executor) };
}

const oursOnce = (dialect: CodemodeExecutor, workload: Workload) => () => runDialect('ours (load)', dialect, workload);

/**
 * Ours and the reference, N programs at once, in rounds that alternate which side goes first;
 * ours alone when there is no reference.
 */
export async function measureLoad(
  plan: LoadPlan,
  reference: ReferencePeer | undefined,
  track: (executor: IsolateExecutor) => void,
  sizes: readonly LoadSize[],
): Promise<LoadFigures[]> {
  const figures: LoadFigures[] = [];
  for (const n of sizes) {
    const { executor, dialect } = defaultExecutor(track);
    const ours = oursOnce(dialect, THREE_WAITS);
    const theirs = reference === undefined ? undefined : () => reference.run(THREE_WAITS);
    const oursCold = await burst(n, ours, executor);
    describeFailures('ours, cold', n, oursCold);
    await growPool(executor, n);
    if (theirs !== undefined) describeFailures('reference, warm-up', n, await burst(n, theirs));
    else describeFailures('ours, warm-up', n, await burst(n, ours, executor));
    const oursWarm: Burst[] = [];
    const referenceBursts: Burst[] = [];
    for (let round = 0; round < plan.loadRounds; round++) {
      const order = round % 2 === 0 ? ['ours', 'reference'] : ['reference', 'ours'];
      for (const side of order) {
        if (side === 'ours') oursWarm.push(await burst(n, ours, executor));
        else if (theirs !== undefined) referenceBursts.push(await burst(n, theirs));
      }
    }
    for (const result of oursWarm) describeFailures('ours, warm', n, result);
    for (const result of referenceBursts) describeFailures('reference', n, result);
    const { maxWorkers, spawns } = executor.stats();
    figures.push({ n, oursCold, oursWarm, reference: referenceBursts, maxWorkers, spawns });
    note(`N = ${n}: ours ${median(oursWarm)} ms warm, reference ${median(referenceBursts)} ms (median makespans)`);
    await executor.dispose();
  }
  return figures;
}

function median(bursts: readonly Burst[]): string {
  const sorted = bursts.map((result) => result.makespanMs).sort((a, b) => a - b);
  return sorted.length === 0 ? '–' : sorted[Math.floor((sorted.length - 1) / 2)]!.toFixed(0);
}

export interface ThroughputFigures {
  n: number;
  ours: Burst[];
  reference: Burst[];
}

/** Trivial executions, N = 400 at once, on a warmed executor with default options and on the reference. */
export async function measureThroughput(
  plan: LoadPlan,
  reference: ReferencePeer,
  track: (executor: IsolateExecutor) => void,
): Promise<ThroughputFigures> {
  const { executor, dialect } = defaultExecutor(track);
  const ours = oursOnce(dialect, TRIVIAL_WORKLOAD);
  const theirs = () => reference.run(TRIVIAL_WORKLOAD);
  await growPool(executor, THROUGHPUT_SIZE);
  describeFailures('ours, warm-up', THROUGHPUT_SIZE, await burst(THROUGHPUT_SIZE, ours));
  describeFailures('reference, warm-up', THROUGHPUT_SIZE, await burst(THROUGHPUT_SIZE, theirs));
  const figures: ThroughputFigures = { n: THROUGHPUT_SIZE, ours: [], reference: [] };
  for (let round = 0; round < plan.loadRounds; round++) {
    const oursFirst = round % 2 === 0;
    if (oursFirst) figures.ours.push(await burst(THROUGHPUT_SIZE, ours));
    figures.reference.push(await burst(THROUGHPUT_SIZE, theirs));
    if (!oursFirst) figures.ours.push(await burst(THROUGHPUT_SIZE, ours));
  }
  for (const result of [...figures.ours, ...figures.reference]) describeFailures('throughput', THROUGHPUT_SIZE, result);
  await executor.dispose();
  return figures;
}

export interface SpinMixFigures {
  n: SpinMixSize;
  /** The N waiting programs alone, and beside the spinners, in the same rounds. */
  alone: Burst[];
  withSpinners: Burst[];
  /** Spinners that did not end with the CPU-bound text. */
  spinnersWrong: number;
}

/** Ours only: N waiting programs, alone and with 4 spinners (cpuTimeout 1 s) started just before them. */
export async function measureSpinMix(
  plan: LoadPlan,
  track: (executor: IsolateExecutor) => void,
): Promise<SpinMixFigures[]> {
  const figures: SpinMixFigures[] = [];
  const spinText = formatCpuTimeout(SPIN_CPU_BOUND_MS);
  for (const n of LOAD_SIZES) {
    const { executor, dialect } = defaultExecutor(track);
    const ours = oursOnce(dialect, THREE_WAITS);
    // Grown for the programs and the spinners: every measured burst finds the pool warm.
    await growPool(executor, n + SPINNERS);
    await burst(n, ours);
    const result: SpinMixFigures = { n, alone: [], withSpinners: [], spinnersWrong: 0 };
    const withSpinners = async () => {
      const spinning = Array.from({ length: SPINNERS }, () =>
        dialect.execute('async () => { while (true) {} }', [], { cpuTimeout: SPIN_CPU_BOUND_MS }),
      );
      result.withSpinners.push(await burst(n, ours));
      for (const outcome of await Promise.all(spinning)) if (outcome.error !== spinText) result.spinnersWrong += 1;
    };
    for (let round = 0; round < plan.loadRounds; round++) {
      if (round % 2 === 0) await withSpinners();
      result.alone.push(await burst(n, ours));
      if (round % 2 === 1) await withSpinners();
    }
    for (const bursts of [result.alone, result.withSpinners])
      for (const one of bursts) describeFailures('ours, spin mix', n, one);
    figures.push(result);
    await executor.dispose();
  }
  return figures;
}

export interface MemoryFigures {
  /** Programs started at once, and how many of them ran at once (at most maxWorkers). */
  n: number;
  running: number;
  /** The pool's proportional set size, all members together, with every running program waiting on a tool. */
  poolPssMb: number | undefined;
  members: number;
}

/**
 * Ours only: N programs that each wait on a tool until all that can run at once are waiting, then
 * the PSS of every member is read (stats({pss: true})): the pool at its peak for that load.
 */
export async function measurePoolMemory(track: (executor: IsolateExecutor) => void): Promise<MemoryFigures[]> {
  const figures: MemoryFigures[] = [];
  for (const n of [100, 400]) {
    const executor = new IsolateExecutor();
    track(executor);
    await holdAtOnce(executor, n, () => {
      const stats = executor.stats({ pss: true });
      const pss = stats.members.map((member) => member.pssMb);
      const poolPssMb = pss.every((value) => value !== undefined)
        ? pss.reduce<number>((sum, value) => sum + value!, 0)
        : undefined;
      figures.push({ n, running: stats.states.busy, poolPssMb, members: stats.members.length });
    });
    await executor.dispose();
  }
  return figures;
}
