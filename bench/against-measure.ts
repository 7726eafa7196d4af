/**
 * What `--against` measures on two trees in one process. Sequential figures: both trees' dialects
 * over identical pools, every round running the trivial execution and the ten tool calls on each
 * tree (four contenders, rotating order; interleave.ts). The load: N programs that wait on tools
 * (load.ts's program), each tree its own executor with default options, in bursts that alternate
 * between the trees so that only one tree is under load at a time.
 */
import { type Burst, burst, describeFailures } from './burst.js';
import { interleave } from './interleave.js';
import { poolSettled } from './isolate-measures.js';
import { runDialect } from './ours.js';
import { note } from './progress.js';
import { againstText } from './texts.js';
import type { TreeExecutor } from './trees.js';
import { THREE_WAITS, WORKLOADS } from './workloads.js';

export const SIDES = ['ours', 'theirs'] as const;
export type Side = (typeof SIDES)[number];

/** One process running executions and one warm spare, on both trees: `npm run bench`'s fixed pool. */
export const SEQUENTIAL_POOL = { maxWorkers: 1, spare: 1 };
export const LOAD_SIZE = 100;
/** How long growing a pool to N members may take before the run gives up. */
const GROW_BOUND_MS = 120_000;

export interface SequentialSamples {
  /** ms per execution, index i = round i on both sides, so the two can be paired. */
  trivial: number[];
  tools10: number[];
}

/** One run on each tree, then until each pool's spare has started: the rounds find both warm. */
export async function warm(executors: Record<Side, TreeExecutor>): Promise<void> {
  for (const side of SIDES) {
    const outcome = await executors[side].dialect.execute('async () => 1', []);
    if (outcome.result !== 1) throw new Error(againstText.wrongOutcome(side, 'async () => 1', outcome));
    await poolSettled(executors[side].pool);
  }
}

export async function measureSequential(
  executors: Record<Side, TreeExecutor>,
  plan: { warmup: number; rounds: number },
): Promise<Record<Side, SequentialSamples>> {
  const name = (side: Side, workload: string) => `${side} ${workload}`;
  const samples = await interleave(
    SIDES.flatMap((side) =>
      WORKLOADS.map((workload) => ({
        name: name(side, workload.name),
        once: () => runDialect(name(side, workload.label), executors[side].dialect, workload),
      })),
    ),
    plan,
  );
  const of = (side: Side, workload: string) => samples.get(name(side, workload))!;
  return {
    ours: { trivial: of('ours', 'trivial'), tools10: of('ours', 'tools10') },
    theirs: { trivial: of('theirs', 'trivial'), tools10: of('theirs', 'tools10') },
  };
}

/**
 * Grows the pool to as many members as N programs at once need: N programs wait on a tool until
 * as many as can run at once (N, at most maxWorkers, fewer if the memory budget stops the pool)
 * are all waiting. Through the dialect, so that it asks of the other tree only what every release has.
 */
async function grow({ pool, dialect }: TreeExecutor, n: number): Promise<void> {
  const running = Math.min(n, pool.stats().maxWorkers);
  let arrived = 0;
  // Why the gate opened: all arrived, the memory budget stopped the pool short, or the time bound.
  let openedBy: 'all' | 'budget' | 'bound' | undefined;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const openBy = (reason: typeof openedBy) => {
    openedBy ??= reason;
    open();
  };
  const budgetWatch = setInterval(() => {
    const { starting, queued, states } = pool.stats();
    if (arrived > 0 && starting === 0 && queued > 0 && states.busy === arrived) openBy('budget');
  }, 100);
  const giveUp = setTimeout(() => openBy('bound'), GROW_BOUND_MS);
  const fns = {
    wait: async () => {
      if (++arrived === running) openBy('all');
      await opened;
      return 1;
    },
  };
  try {
    const outcomes = await Promise.all(
      Array.from({ length: n }, () => dialect.execute('async () => gate.wait({})', [{ name: 'gate', fns }])),
    );
    const wrong = outcomes.filter((outcome) => outcome.result !== 1);
    if (wrong.length > 0) throw new Error(againstText.growFailed(wrong.length, n, wrong[0]));
    if (openedBy === 'bound') throw new Error(againstText.growTooSlow(running, GROW_BOUND_MS));
    const settled = performance.now() + GROW_BOUND_MS;
    while (pool.stats().starting > 0 && performance.now() < settled) await new Promise((r) => setTimeout(r, 5));
  } finally {
    clearInterval(budgetWatch);
    clearTimeout(giveUp);
  }
}

export async function measureLoad(
  executors: Record<Side, TreeExecutor>,
  loadRounds: number,
): Promise<Record<Side, Burst[]>> {
  const once = (side: Side) => () => runDialect(`${side} (load)`, executors[side].dialect, THREE_WAITS);
  for (const side of SIDES) {
    await grow(executors[side], LOAD_SIZE);
    describeFailures(`${side}, warm-up`, LOAD_SIZE, await burst(LOAD_SIZE, once(side)));
  }
  const bursts: Record<Side, Burst[]> = { ours: [], theirs: [] };
  for (let round = 0; round < loadRounds; round++) {
    const order = round % 2 === 0 ? SIDES : ([...SIDES].reverse() as Side[]);
    for (const side of order) bursts[side].push(await burst(LOAD_SIZE, once(side)));
    note(
      `round ${round + 1} of ${loadRounds}: ours ${bursts.ours.at(-1)!.makespanMs.toFixed(0)} ms, theirs ${bursts.theirs.at(-1)!.makespanMs.toFixed(0)} ms`,
    );
  }
  for (const side of SIDES) for (const result of bursts[side]) describeFailures(side, LOAD_SIZE, result);
  return bursts;
}
