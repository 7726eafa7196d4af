/**
 * What confinement costs (issue 12): cold start and a warm trivial execution, confined
 * (`confinement: 'auto'`, which confines on a host that allows it) and unconfined ('off'), in the
 * same run. Cold starts alternate between the two, and the warm executions run in interleaved
 * rounds, so both see the same load. The targets are printed and judged, never asserted.
 */

import type { ConfinementOption } from '../src/isolate/index.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { type Contender, interleave } from './interleave.js';
import { poolSettled } from './isolate-measures.js';
import { runNative } from './ours.js';
import { ms, pairedDifferences, printTable, type Summary, summarize } from './stats.js';
import { type Target, verdict } from './targets.js';
import { WORKLOADS } from './workloads.js';

const TARGETS = {
  coldStartDelta: { text: '<= +15 ms p50', met: (delta: number) => delta <= 15 },
  trivialDelta: { text: '<= +0.3 ms p50', met: (delta: number) => delta <= 0.3 },
} as const satisfies Record<string, Target>;

const MODES = ['auto', 'off'] as const satisfies readonly ConfinementOption[];

export interface ConfinementPlan {
  coldStarts: number;
  warmup: number;
  rounds: number;
}

export interface ConfinementFigures {
  /** What 'auto' gave on this host (stats().confinement.summary). */
  summary: string;
  confined: boolean;
  coldStart: Record<(typeof MODES)[number], number[]>;
  trivial: Record<(typeof MODES)[number], number[]>;
}

/** New executor (one member, no spare) to its first result, then disposed. */
async function coldStartOnce(confinement: ConfinementOption): Promise<number> {
  const start = performance.now();
  const executor = new IsolateExecutor({ confinement, pool: { maxWorkers: 1, spare: 0 } });
  try {
    const outcome = await executor.execute({ code: 'async () => 42' });
    const elapsed = performance.now() - start;
    if (outcome.result !== 42) throw new Error(`cold start (${confinement}): got ${JSON.stringify(outcome)}`);
    return elapsed;
  } finally {
    await executor.dispose();
  }
}

/** `track` receives every executor started, so the caller can stop it on an interrupt. */
export async function measureConfinement(
  plan: ConfinementPlan,
  track: (executor: IsolateExecutor) => void,
): Promise<ConfinementFigures> {
  // Detection (once per process) happens here, outside every sample.
  void new IsolateExecutor().dispose();
  const coldStart = { auto: [] as number[], off: [] as number[] };
  for (let i = 0; i < plan.coldStarts; i++) {
    // The order alternates, so neither mode always starts right after the other.
    for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) coldStart[mode].push(await coldStartOnce(mode));
  }
  const executors = { auto: new IsolateExecutor(), off: new IsolateExecutor({ confinement: 'off' }) };
  for (const executor of Object.values(executors)) track(executor);
  try {
    const trivialWorkload = WORKLOADS.find((workload) => workload.name === 'trivial')!;
    for (const executor of Object.values(executors)) {
      await executor.execute({ code: 'async () => 1' });
      await poolSettled(executor);
    }
    const contenders: Contender[] = MODES.map((mode) => ({
      name: mode,
      once: () => runNative(`confinement ${mode}`, executors[mode], trivialWorkload),
    }));
    const samples = await interleave(contenders, plan);
    const { confined, summary } = executors.auto.stats().confinement;
    return { summary, confined, coldStart, trivial: { auto: samples.get('auto')!, off: samples.get('off')! } };
  } finally {
    await Promise.all(Object.values(executors).map((executor) => executor.dispose()));
  }
}

function row(figure: string, confined: Summary, unconfined: Summary, pairedDelta: Summary, target: Target): string[] {
  const delta = confined.p50 - unconfined.p50;
  return [
    figure,
    String(confined.n),
    ms(confined.p50),
    ms(unconfined.p50),
    `${delta >= 0 ? '+' : ''}${ms(delta)}`,
    `${pairedDelta.p50 >= 0 ? '+' : ''}${ms(pairedDelta.p50)}`,
    target.text,
    verdict(target, delta),
  ];
}

export function printConfinement(figures: ConfinementFigures): void {
  console.log(`\nConfinement: confined ('auto') against unconfined ('off'), measured in the same run:\n`);
  console.log(`  ${figures.summary}\n`);
  const cold = [summarize(figures.coldStart.auto), summarize(figures.coldStart.off)] as const;
  const warm = [summarize(figures.trivial.auto), summarize(figures.trivial.off)] as const;
  printTable(
    ['figure', 'N', 'confined p50', 'unconfined p50', 'delta', 'paired delta', 'target', 'met'],
    [
      row(
        'cold start: new executor to first result',
        ...cold,
        summarize(pairedDifferences(figures.coldStart.auto, figures.coldStart.off)),
        TARGETS.coldStartDelta,
      ),
      row(
        'trivial execution, warm',
        ...warm,
        summarize(pairedDifferences(figures.trivial.auto, figures.trivial.off)),
        TARGETS.trivialDelta,
      ),
    ],
  );
  console.log(`
    delta: the difference of the two p50s, which the target judges; paired delta: the p50 of the
    sample-by-sample differences (cold starts alternate, warm runs share rounds). Detection runs
    once per process, before the first confined executor, and is not in these figures.${
      figures.confined ? '' : '\n    This host did not confine: both columns ran unconfined.'
    }`);
}
