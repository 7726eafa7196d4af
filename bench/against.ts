/**
 * `npm run bench -- --against <dir> [--quick]`: ours (this tree's dist/, which the bench builds
 * first) against another built tree (its dist/) in one process and one run, for the figures a
 * "speed must not change" clause names: the trivial execution's p50 through the dialect, the cost
 * per tool call, and the N = 100 load's warm makespan and p95. Each figure is printed for both
 * trees with the ratio ours / theirs, its 95% interval (a bootstrap over paired rounds) and whether
 * ours stays within 5%.
 */

import {
  LOAD_SIZE,
  measureLoad,
  measureSequential,
  SEQUENTIAL_POOL,
  type SequentialSamples,
  SIDES,
  type Side,
  warm,
} from './against-measure.js';
import type { Burst } from './burst.js';
import { type Interval, pairedBootstrap, pick } from './paired-bootstrap.js';
import { phase } from './progress.js';
import { ms, printTable, summarize } from './stats.js';
import { againstText } from './texts.js';
import { loadTree, oursTree, type TreeExecutor } from './trees.js';

export interface AgainstPlan {
  warmup: number;
  rounds: number;
  /** Measured N = 100 bursts per tree. */
  loadRounds: number;
}

/** Measured N = 100 bursts per tree (about 2.5 s a round): enough paired rounds for a bootstrap in the full run. */
export const AGAINST_LOAD_ROUNDS = { full: 20, quick: 4 } as const;
/** Below this many paired rounds a percentile bootstrap is too coarse to lean on; the table says so. */
const FEW_ROUNDS = 10;
const RESAMPLES = 2_000;
const CONFIDENCE = 0.95;
/** "Stay within 5%": ours may be at most this much slower. */
const WITHIN = 1.05;

/** One figure: from the rounds picked by a resample (all rounds, in order, for the point estimate). */
interface Figure {
  label: string;
  n: string;
  rounds: number;
  of(side: Side, indices: readonly number[]): number;
  judged: boolean;
}

const p50 = (samples: readonly number[], indices: readonly number[]) => summarize(pick(samples, indices)).p50;

function figures(sequential: Record<Side, SequentialSamples>, load: Record<Side, Burst[]>): Figure[] {
  const rounds = sequential.ours.trivial.length;
  const loadRounds = load.ours.length;
  const perCall = (side: Side, indices: readonly number[]) =>
    (p50(sequential[side].tools10, indices) - p50(sequential[side].trivial, indices)) / 10;
  const makespans = (side: Side) => load[side].map((result) => result.makespanMs);
  return [
    {
      label: 'trivial execution p50 (dialect)',
      n: String(rounds),
      rounds,
      of: (side, indices) => p50(sequential[side].trivial, indices),
      judged: true,
    },
    {
      label: 'ten tool calls p50 (dialect)',
      n: String(rounds),
      rounds,
      of: (side, indices) => p50(sequential[side].tools10, indices),
      judged: false,
    },
    { label: 'per tool call, (ten - trivial) / 10', n: String(rounds), rounds, of: perCall, judged: true },
    {
      label: `N = ${LOAD_SIZE} load: warm makespan, median burst`,
      n: `${loadRounds} bursts`,
      rounds: loadRounds,
      of: (side, indices) => p50(makespans(side), indices),
      judged: true,
    },
    {
      label: `N = ${LOAD_SIZE} load: latency per program, p95`,
      n: `${loadRounds} x ${LOAD_SIZE}`,
      rounds: loadRounds,
      of: (side, indices) => summarize(indices.flatMap((index) => load[side][index]!.latencies)).p95,
      judged: true,
    },
  ];
}

function verdict(interval: Interval): string {
  if (interval.high <= WITHIN) return 'yes';
  if (interval.low > WITHIN) return 'NO';
  return 'unclear';
}

function row(figure: Figure): string[] {
  const all = Array.from({ length: figure.rounds }, (_, index) => index);
  const ours = figure.of('ours', all);
  const theirs = figure.of('theirs', all);
  const interval = pairedBootstrap(
    figure.rounds,
    (indices) => figure.of('ours', indices) / figure.of('theirs', indices),
    { resamples: RESAMPLES, confidence: CONFIDENCE },
  );
  const digits = figure.label.startsWith('N =') ? 0 : 3;
  return [
    figure.label,
    figure.n,
    ms(ours, digits),
    ms(theirs, digits),
    (ours / theirs).toFixed(3),
    `${interval.low.toFixed(3)} to ${interval.high.toFixed(3)}`,
    figure.judged ? verdict(interval) : '',
  ];
}

function printAgainst(sequential: Record<Side, SequentialSamples>, load: Record<Side, Burst[]>): void {
  console.log(againstText.figuresTitle(RESAMPLES));
  printTable(
    ['figure', 'N', 'ours', 'theirs', 'ratio', '95% interval', 'within 5%'],
    figures(sequential, load).map(row),
  );
  const loadRounds = load.ours.length;
  if (loadRounds < FEW_ROUNDS) console.log(againstText.fewRounds(loadRounds, FEW_ROUNDS));
  for (const side of SIDES) {
    const failed = load[side].reduce((sum, result) => sum + result.failures, 0);
    const first = load[side].find((result) => result.failures > 0)?.firstFailure;
    if (failed > 0) console.log(againstText.loadFailures(side, failed, first));
  }
  console.log(againstText.notes);
}

/** Every executor it creates goes to `track` at once, so the caller stops it whatever happens. */
export async function benchAgainst(
  dir: string,
  plan: AgainstPlan,
  track: (pool: TreeExecutor['pool']) => void,
): Promise<void> {
  // Theirs first: a missing build fails before anything is started.
  const theirs = await loadTree(dir);
  const ours = await oursTree();
  console.log(againstText.header(ours.label, theirs.label));
  const create = (options?: typeof SEQUENTIAL_POOL): Record<Side, TreeExecutor> => {
    const pair = {
      ours: ours.create(options && { pool: options }),
      theirs: theirs.create(options && { pool: options }),
    };
    for (const side of SIDES) track(pair[side].pool);
    return pair;
  };

  const fixed = create(SEQUENTIAL_POOL);
  await phase('warming both trees (pool { maxWorkers: 1, spare: 1 } each)', () => warm(fixed));
  const sequential = await phase(
    `trivial and ten tool calls: ${plan.warmup} warm-up + ${plan.rounds} measured rounds, each running both on both trees`,
    () => measureSequential(fixed, plan),
  );
  await Promise.all(SIDES.map((side) => fixed[side].pool.dispose()));

  const elastic = create();
  const load = await phase(
    `load: N = ${LOAD_SIZE} programs at once, three 200 ms tool calls each; both pools grown, then ${plan.loadRounds} bursts per tree, alternating`,
    () => measureLoad(elastic, plan.loadRounds),
  );
  await Promise.all(SIDES.map((side) => elastic[side].pool.dispose()));

  printAgainst(sequential, load);
}
