/**
 * The printed result of the load phase (load.ts): ours against the reference with N programs at
 * once, trivial throughput, the spin mix, and the pool's memory, with issue 11's targets.
 */
import type { Burst } from './burst.js';
import {
  type LoadFigures,
  type MemoryFigures,
  SPIN_CPU_BOUND_MS,
  SPINNERS,
  type SpinMixFigures,
  type ThroughputFigures,
} from './load.js';
import { ms, printTable, ratio, summarize } from './stats.js';
import { TARGETS, verdict } from './targets.js';
import { THREE_WAITS, WAIT_TOOL_MS } from './workloads.js';

export interface LoadResults {
  load: LoadFigures[];
  throughput: ThroughputFigures;
  spinMix: SpinMixFigures[];
  memory: MemoryFigures[];
  /** The sequential rows of the same run: the default options' pool against the fixed one. */
  defaultPool: { trivialRatio: number; perCallDelta: number; trivialP50: number; fixedTrivialP50: number };
}

const IDEAL_MS = THREE_WAITS.toolCalls * WAIT_TOOL_MS;
const DASH = '–';

interface Pooled {
  /** From the bursts in which every program succeeded: a burst with failures times nothing comparable. */
  makespan: number;
  p50: number;
  p95: number;
  /** Bursts in which every program succeeded, of all. */
  cleanBursts: number;
  bursts: number;
  failures: number;
  /** Programs run, failed or not. */
  programs: number;
  /** Programs in the clean bursts: the latencies. */
  n: number;
  firstFailure: string | undefined;
}

/** The median clean burst's makespan, and every program's latency pooled over the clean bursts. */
function pooled(bursts: readonly Burst[]): Pooled {
  const clean = bursts.filter((result) => result.failures === 0);
  const makespans = summarize(clean.map((result) => result.makespanMs));
  const latencies = summarize(clean.flatMap((result) => result.latencies));
  const failures = bursts.reduce((sum, result) => sum + result.failures, 0);
  return {
    makespan: makespans.p50,
    p50: latencies.p50,
    p95: latencies.p95,
    cleanBursts: clean.length,
    bursts: bursts.length,
    failures,
    programs: bursts.reduce((sum, result) => sum + result.latencies.length + result.failures, 0),
    n: latencies.n,
    firstFailure: bursts.find((result) => result.firstFailure !== undefined)?.firstFailure,
  };
}

/** A side's figure from its clean bursts, marked when some failed; or, when none was clean, how many programs failed. */
function figureOf(side: Pooled, text: string): string {
  if (side.cleanBursts === 0) return `${side.failures} of ${side.programs} failed *`;
  return side.failures > 0 ? `${text} (${side.cleanBursts} of ${side.bursts} bursts) *` : text;
}

/** A ratio of the two sides' clean bursts, when both have one. */
function ratioOf(ours: Pooled, theirs: Pooled, value: number): string {
  return ours.cleanBursts === 0 || theirs.cleanBursts === 0 ? DASH : ratio(value);
}

type Row = [figure: string, n: string, ours: string, reference: string, ratio: string, target: string, met: string];

/** The warm makespan's target: against the reference at N = 100, against a bound at N = 1000. */
function makespanTarget(n: number, warm: Pooled, vsReference: number | undefined): [string, string] {
  if (n === 100) return [TARGETS.loadVsReference.text, verdict(TARGETS.loadVsReference, vsReference)];
  if (n === 1000)
    return [
      TARGETS.load1000Makespan.text,
      verdict(TARGETS.load1000Makespan, warm.cleanBursts > 0 ? warm.makespan : undefined),
    ];
  return ['', ''];
}

/** The host's CPU per execution over our warm bursts, and the largest pool RSS any of them saw. */
function hostFigures(bursts: readonly Burst[]): {
  cpuPerRun: number | undefined;
  peakRssMb: number | undefined;
  budget: { peakMb: number; budgetMb: number } | undefined;
} {
  const measured = bursts.filter((result) => result.hostCpuMs !== undefined);
  const runs = measured.reduce((sum, result) => sum + result.latencies.length + result.failures, 0);
  const cpu = measured.reduce((sum, result) => sum + result.hostCpuMs!, 0);
  const peaks = bursts.flatMap((result) => (result.peakPoolRssMb === undefined ? [] : [result.peakPoolRssMb]));
  return {
    cpuPerRun: runs === 0 ? undefined : cpu / runs,
    peakRssMb: peaks.length === 0 ? undefined : Math.max(...peaks),
    budget: bursts.at(-1)?.poolMemory,
  };
}

function loadRows(figures: LoadFigures): Row[] {
  const { n } = figures;
  const warm = pooled(figures.oursWarm);
  const oursOnly = figures.reference.length === 0;
  const reference = pooled(figures.reference);
  const cold = pooled([figures.oursCold]);
  const judged = n === 100;
  const vsIdeal = warm.makespan / IDEAL_MS;
  const vsReference = warm.makespan / reference.makespan;
  const compared = warm.cleanBursts > 0 && reference.cleanBursts > 0;
  const failures = warm.failures + cold.failures;
  const host = hostFigures(figures.oursWarm);
  const theirs = (text: string) => (oursOnly ? 'not run (ours only)' : figureOf(reference, text));
  const noFailureJudged = n === 400 || n === 1000;
  return [
    [
      `N = ${n}: makespan, warm (median burst)`,
      String(figures.oursWarm.length),
      figureOf(warm, ms(warm.makespan, 0)),
      theirs(ms(reference.makespan, 0)),
      oursOnly ? DASH : ratioOf(warm, reference, vsReference),
      ...makespanTarget(n, warm, compared ? vsReference : undefined),
    ],
    [
      `N = ${n}: makespan, warm, over the ideal ${IDEAL_MS} ms`,
      String(figures.oursWarm.length),
      figureOf(warm, ratio(vsIdeal)),
      theirs(ratio(reference.makespan / IDEAL_MS)),
      DASH,
      judged ? TARGETS.loadVsIdeal.text : '',
      judged ? verdict(TARGETS.loadVsIdeal, warm.cleanBursts > 0 ? vsIdeal : undefined) : '',
    ],
    [
      `N = ${n}: latency per program, p50 / p95`,
      String(warm.programs),
      figureOf(warm, `${ms(warm.p50, 0)} / ${ms(warm.p95, 0)}`),
      theirs(`${ms(reference.p50, 0)} / ${ms(reference.p95, 0)}`),
      oursOnly ? DASH : ratioOf(warm, reference, warm.p95 / reference.p95),
      '',
      '',
    ],
    [
      `N = ${n}: makespan, cold (the pool grows from nothing)`,
      '1',
      figureOf(cold, ms(cold.makespan, 0)),
      'not comparable',
      DASH,
      '',
      '',
    ],
    [
      `N = ${n}: programs failed or refused (QUEUE_FULL)`,
      String(warm.programs + cold.programs),
      String(failures),
      oursOnly ? 'not run (ours only)' : String(reference.failures),
      DASH,
      noFailureJudged ? TARGETS.loadNoFailure.text : '',
      noFailureJudged ? verdict(TARGETS.loadNoFailure, failures) : '',
    ],
    [
      `N = ${n}: host CPU per execution, warm (process.cpuUsage)`,
      String(warm.programs),
      host.cpuPerRun === undefined ? DASH : ms(host.cpuPerRun, 2),
      'not measured',
      DASH,
      TARGETS.hostCpuPerExecution.text,
      verdict(TARGETS.hostCpuPerExecution, host.cpuPerRun),
    ],
    [
      `N = ${n}: peak pool memory, warm (sum of members' RSS)`,
      String(figures.oursWarm.length),
      host.peakRssMb === undefined ? DASH : `${host.peakRssMb.toFixed(0)} MB`,
      'not measured',
      DASH,
      '',
      '',
    ],
    [
      `N = ${n}: peak pool memory as its budget counts it (stats().memory)`,
      String(figures.oursWarm.length),
      host.budget === undefined ? DASH : `${host.budget.peakMb.toFixed(0)} MB`,
      'not measured',
      DASH,
      host.budget === undefined ? '' : `<= pool.memoryBudgetMb, ${host.budget.budgetMb} MB`,
      host.budget === undefined ? '' : host.budget.peakMb <= host.budget.budgetMb ? 'yes' : 'NO',
    ],
  ];
}

function throughputRows(figures: ThroughputFigures): Row[] {
  const ours = pooled(figures.ours);
  const reference = pooled(figures.reference);
  const oursRate = (figures.n / ours.makespan) * 1000;
  const referenceRate = (figures.n / reference.makespan) * 1000;
  return [
    [
      `trivial throughput, N = ${figures.n} at once (runs/s)`,
      String(figures.ours.length),
      figureOf(ours, `${oursRate.toFixed(0)} /s`),
      figureOf(reference, `${referenceRate.toFixed(0)} /s`),
      ratioOf(ours, reference, oursRate / referenceRate),
      '',
      '',
    ],
  ];
}

/** What failed, side by side, for the footnote. */
function failureNotes(results: LoadResults): string[] {
  const notes: string[] = [];
  const add = (what: string, side: Pooled) => {
    if (side.firstFailure !== undefined)
      notes.push(`${what}: ${side.failures} of ${side.programs} failed; the first: ${side.firstFailure}`);
  };
  for (const figures of results.load) {
    add(`ours at N = ${figures.n}`, pooled([figures.oursCold, ...figures.oursWarm]));
    add(`reference at N = ${figures.n}`, pooled(figures.reference));
  }
  add(`ours, trivial at N = ${results.throughput.n}`, pooled(results.throughput.ours));
  add(`reference, trivial at N = ${results.throughput.n}`, pooled(results.throughput.reference));
  return notes;
}

type SpinRow = [
  figure: string,
  n: string,
  alone: string,
  withSpinners: string,
  ratio: string,
  target: string,
  met: string,
];

function spinRows(figures: SpinMixFigures): SpinRow[] {
  const alone = pooled(figures.alone);
  const mixed = pooled(figures.withSpinners);
  const growth = mixed.p95 / alone.p95;
  const judged = figures.n === 100;
  return [
    [
      `N = ${figures.n}: p95 latency`,
      String(mixed.n),
      ms(alone.p95, 0),
      ms(mixed.p95, 0),
      ratio(growth),
      judged ? TARGETS.spinP95Growth.text : '',
      judged ? verdict(TARGETS.spinP95Growth, growth) : '',
    ],
    [
      `N = ${figures.n}: p50 latency`,
      String(mixed.n),
      ms(alone.p50, 0),
      ms(mixed.p50, 0),
      ratio(mixed.p50 / alone.p50),
      '',
      '',
    ],
    [
      `N = ${figures.n}: makespan (median burst)`,
      String(figures.withSpinners.length),
      ms(alone.makespan, 0),
      ms(mixed.makespan, 0),
      ratio(mixed.makespan / alone.makespan),
      '',
      '',
    ],
    [
      `N = ${figures.n}: failed programs; spinners not ended at their CPU bound`,
      String(figures.n * figures.alone.length),
      String(alone.failures),
      `${mixed.failures}; ${figures.spinnersWrong}`,
      DASH,
      '',
      '',
    ],
  ];
}

type MemoryRow = [figure: string, n: string, ours: string, target: string, met: string];

function memoryRows(figures: MemoryFigures): MemoryRow[] {
  const perRun = figures.poolPssMb === undefined ? undefined : figures.poolPssMb / figures.running;
  return [
    [
      `N = ${figures.n} (${figures.running} running at once): pool PSS, ${figures.members} members`,
      '1',
      figures.poolPssMb === undefined ? 'not reported here' : `${figures.poolPssMb.toFixed(0)} MB`,
      '',
      '',
    ],
    [
      `N = ${figures.n}: PSS per running execution`,
      '1',
      perRun === undefined ? DASH : `${perRun.toFixed(1)} MB`,
      TARGETS.pssPerExecution.text,
      verdict(TARGETS.pssPerExecution, perRun),
    ],
  ];
}

export function printLoadReport(results: LoadResults): void {
  console.log(
    `\nLoad: N programs at once, each making ${THREE_WAITS.toolCalls} sequential ${WAIT_TOOL_MS} ms tool calls (ideal makespan ${IDEAL_MS} ms);`,
  );
  console.log(
    'ours: the dialect over an IsolateExecutor with default options; reference: one POST per program; ratio = ours / reference:\n',
  );
  printTable(
    ['figure', 'N', 'ours', 'reference', 'ratio', 'target', 'met'],
    [...results.load.flatMap(loadRows), ...throughputRows(results.throughput)],
  );
  const failures = failureNotes(results);
  if (failures.length > 0) {
    console.log('\n*   Only bursts in which every program succeeded are timed and compared. What failed:');
    for (const failure of failures) console.log(`    ${failure}`);
  }
  const { defaultPool } = results;
  console.log(
    '\nThe default options on one execution at a time, against the fixed pool of the rows above, same rounds:\n',
  );
  printTable(
    ['figure', 'default options', 'fixed pool', 'ratio / delta', 'target', 'met'],
    [
      [
        'trivial execution p50, native',
        ms(defaultPool.trivialP50),
        ms(defaultPool.fixedTrivialP50),
        ratio(defaultPool.trivialRatio),
        TARGETS.defaultPoolTrivial.text,
        verdict(TARGETS.defaultPoolTrivial, defaultPool.trivialRatio),
      ],
      [
        'per tool call, native',
        DASH,
        DASH,
        `${defaultPool.perCallDelta >= 0 ? '+' : ''}${ms(defaultPool.perCallDelta, 3)}`,
        TARGETS.defaultPoolPerCall.text,
        verdict(TARGETS.defaultPoolPerCall, defaultPool.perCallDelta),
      ],
    ],
  );
  console.log(
    `\nThe same load with ${SPINNERS} spinning programs mixed in (cpuTimeout ${SPIN_CPU_BOUND_MS} ms), ours only; the waiting programs, alone and beside the spinners, in the same rounds:\n`,
  );
  printTable(['figure', 'N', 'alone', 'with spinners', 'ratio', 'target', 'met'], results.spinMix.flatMap(spinRows));
  console.log('\nMemory while N programs wait on a tool at once (stats({pss: true})), ours only:\n');
  printTable(['figure', 'N', 'ours', 'target', 'met'], results.memory.flatMap(memoryRows));
  console.log(`
Bursts alternate between the sides round by round; the first burst on each side is not timed
(ours: it grows a fresh pool, reported as "cold"). A spin wedges wrangler dev, so the spin mix is
ours only, and so is N = 1000 (run after wrangler dev is stopped). Host CPU is the executor's
process over the warm bursts, the pool's RSS sampling (every 250 ms) left out. An RSS sum counts
the pages members share (the workerd binary) once per member; PSS counts each member's private
memory and its share of those pages. The run's machine is shared, so read every figure as noisy.`);
}
