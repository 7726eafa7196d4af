/**
 * The printed result of `npm run bench`: one table of ours against the reference (with the
 * issue's targets and whether each is met), one of the remote overhead, and the notes a reader
 * needs to read them honestly.
 */
import type { HealFigures, SpinFigures } from './isolate-measures.js';
import { medianStandardError, ms, pairedDifferences, printTable, ratio, type Summary, summarize } from './stats.js';
import { TARGETS, verdict } from './targets.js';
import type { RoundWorkloadName } from './workloads.js';

/** The contenders of the interleaved rounds, by the name their samples are kept under. */
export const SERIES = {
  native: 'ours, native IsolateExecutor',
  nativeDefault: 'ours, native IsolateExecutor with default options (elastic pool)',
  dialect: 'ours, CodemodeExecutor over IsolateExecutor',
  remote: 'ours, RemoteExecutor to a daemon over loopback',
  reference: 'reference, DynamicWorkerExecutor under wrangler dev',
  roundTrip: 'HTTP round trip to wrangler dev (a 400 answer)',
} as const;

type Series = Map<string, number[]>;

export interface BenchResults {
  warmup: number;
  /** Samples of every contender per workload, from interleaved rounds. */
  series: Record<RoundWorkloadName, Series>;
  coldStart: Summary;
  spinBound: number;
  spin: SpinFigures;
  heal: HealFigures;
  /** The same kill with no spare: the pool must spawn before it serves again. */
  healNoSpare: HealFigures;
  rss: { fresh: (number | undefined)[]; afterRuns: (number | undefined)[]; referenceWorkerd: number | undefined };
  referenceName: string;
}

type Row = [figure: string, n: string, ours: string, reference: string, ratio: string, target: string, met: string];

const DASH = '–';

export function seriesOf(series: Series, name: string): number[] {
  const samples = series.get(name);
  if (samples === undefined) throw new Error(`no samples were taken for "${name}"`);
  return samples;
}

function mbList(values: readonly (number | undefined)[]): string {
  return values.length === 0
    ? DASH
    : values.map((value) => (value === undefined ? '?' : `${value.toFixed(0)} MB`)).join(', ');
}

/** p50 of (ten-call run − trivial run) / 10, from the two workloads' p50s. */
export function perCall(results: BenchResults, name: string): number {
  return perCallEstimate(results, name).value;
}

/**
 * The per-call estimate and its noise: two standard errors of the difference of the two medians,
 * over ten. An estimate within its noise says only that a call costs too little to tell here.
 */
function perCallEstimate(results: BenchResults, name: string): { value: number; noise: number } {
  const trivial = summarize(seriesOf(results.series.trivial, name));
  const ten = summarize(seriesOf(results.series.tools10, name));
  const noise = (2 * Math.hypot(medianStandardError(trivial), medianStandardError(ten))) / 10;
  return { value: (ten.p50 - trivial.p50) / 10, noise };
}

/** A per-call figure, or what it is known to be below when the noise swallows it. */
function perCallText({ value, noise }: { value: number; noise: number }): string {
  return value > noise ? ms(value, 3) : `below noise (< ${ms(Math.max(value, 0) + noise, 3)})`;
}

function workloadRows(results: BenchResults, workload: RoundWorkloadName, label: string): Row[] {
  const series = results.series[workload];
  const native = summarize(seriesOf(series, SERIES.native));
  const dialect = summarize(seriesOf(series, SERIES.dialect));
  const reference = summarize(seriesOf(series, SERIES.reference));
  const net = summarize(pairedDifferences(seriesOf(series, SERIES.reference), seriesOf(series, SERIES.roundTrip)));
  const n = String(native.n);
  const isTrivial = workload === 'trivial';
  const vsReference = (ours: number, theirs: number): [string, string, string] => {
    const value = ours / theirs;
    return [
      ratio(value),
      isTrivial ? TARGETS.trivialVsReference.text : '',
      isTrivial ? verdict(TARGETS.trivialVsReference, value) : '',
    ];
  };
  return [
    [
      `${label} p50, native`,
      n,
      ms(native.p50),
      DASH,
      DASH,
      isTrivial ? TARGETS.trivialP50.text : '',
      isTrivial ? verdict(TARGETS.trivialP50, native.p50) : '',
    ],
    [`${label} p95, native`, n, ms(native.p95), DASH, DASH, '', ''],
    [
      `${label} p50, dialect vs reference`,
      n,
      ms(dialect.p50),
      ms(reference.p50),
      ...vsReference(dialect.p50, reference.p50),
    ],
    [
      `${label} p95, dialect vs reference`,
      n,
      ms(dialect.p95),
      ms(reference.p95),
      ratio(dialect.p95 / reference.p95),
      '',
      '',
    ],
    [`${label} p50, reference net of HTTP *`, n, ms(dialect.p50), ms(net.p50), ...vsReference(dialect.p50, net.p50)],
  ];
}

function oursVsReferenceRows(results: BenchResults): Row[] {
  const nativePerCall = perCall(results, SERIES.native);
  const dialectPerCall = perCallEstimate(results, SERIES.dialect);
  const referencePerCall = perCallEstimate(results, SERIES.reference);
  // A ratio is printed only when both estimates stand above their noise: below it, it could even be negative.
  const bothMeasured = dialectPerCall.value > dialectPerCall.noise && referencePerCall.value > referencePerCall.noise;
  const roundTrip = summarize(seriesOf(results.series.trivial, SERIES.roundTrip));
  const { spin, heal, healNoSpare, coldStart, spinBound, rss } = results;
  const nTrivial = String(roundTrip.n);
  const samples = (summary: Summary) => String(summary.n);
  return [
    ...workloadRows(results, 'trivial', 'trivial execution'),
    ...workloadRows(results, 'tools10', 'ten tool calls'),
    [
      'per tool call, (ten - trivial) / 10, native',
      nTrivial,
      ms(nativePerCall, 3),
      DASH,
      DASH,
      TARGETS.perToolCall.text,
      verdict(TARGETS.perToolCall, nativePerCall),
    ],
    [
      'per tool call, dialect vs reference',
      nTrivial,
      perCallText(dialectPerCall),
      perCallText(referencePerCall),
      bothMeasured ? ratio(dialectPerCall.value / referencePerCall.value) : DASH,
      '',
      '',
    ],
    [
      'HTTP round trip alone (in the reference rows) *',
      nTrivial,
      DASH,
      `${ms(roundTrip.p50)} / ${ms(roundTrip.p95)}`,
      DASH,
      '',
      '',
    ],
    [
      'cold start: new executor to first result, p50 / p95',
      samples(coldStart),
      `${ms(coldStart.p50, 1)} / ${ms(coldStart.p95, 1)}`,
      'not comparable',
      DASH,
      '',
      '',
    ],
    [
      `spin at a ${spinBound} ms bound: call to timeout, p50 / max`,
      samples(spin.reported),
      `${ms(spin.reported.p50, 1)} / ${ms(spin.reported.max, 1)}`,
      'not run **',
      DASH,
      TARGETS.spinReported.text,
      verdict(TARGETS.spinReported, spin.reported.max),
    ],
    [
      '  of which after the bound, p50 / max',
      samples(spin.reported),
      `${ms(spin.reported.p50 - spinBound, 1)} / ${ms(spin.reported.max - spinBound, 1)}`,
      'not run **',
      DASH,
      '',
      '',
    ],
    [
      '  then the next execution, p50 / max',
      samples(spin.nextRun),
      `${ms(spin.nextRun.p50, 1)} / ${ms(spin.nextRun.max, 1)}`,
      'not run **',
      DASH,
      '',
      '',
    ],
    [
      'kill in a run to its failure reported, p50 / max',
      samples(heal.reported),
      `${ms(heal.reported.p50, 1)} / ${ms(heal.reported.max, 1)}`,
      'not run **',
      DASH,
      '',
      '',
    ],
    [
      'kill to the next result (healed), p50 / max',
      samples(heal.nextRun),
      `${ms(heal.nextRun.p50, 1)} / ${ms(heal.nextRun.max, 1)}`,
      'not run **',
      DASH,
      TARGETS.healed.text,
      verdict(TARGETS.healed, heal.nextRun.max),
    ],
    [
      'kill to a warm spare again, p50 / max',
      samples(heal.spareBack),
      `${ms(heal.spareBack.p50, 1)} / ${ms(heal.spareBack.max, 1)}`,
      'not run **',
      DASH,
      '',
      '',
    ],
    [
      'kill to the next result, no spare, p50 / max',
      samples(healNoSpare.nextRun),
      `${ms(healNoSpare.nextRun.p50, 1)} / ${ms(healNoSpare.nextRun.max, 1)}`,
      'not run **',
      DASH,
      '',
      '',
    ],
    ['RSS per pool member, fresh', String(rss.fresh.length), mbList(rss.fresh), DASH, DASH, '', ''],
    [
      'RSS per pool member, after the rounds ***',
      String(rss.afterRuns.length),
      mbList(rss.afterRuns),
      mbList([rss.referenceWorkerd]),
      DASH,
      '',
      '',
    ],
  ];
}

type RemoteRow = [
  figure: string,
  n: string,
  remote: string,
  inProcess: string,
  ratio: string,
  delta: string,
  target: string,
  met: string,
];

function remoteRows(results: BenchResults): RemoteRow[] {
  const rows: RemoteRow[] = [];
  for (const [workload, label] of [
    ['trivial', 'trivial execution'],
    ['tools10', 'ten tool calls'],
  ] as const) {
    const local = summarize(seriesOf(results.series[workload], SERIES.native));
    const remote = summarize(seriesOf(results.series[workload], SERIES.remote));
    for (const stat of ['p50', 'p95'] as const) {
      const delta = remote[stat] - local[stat];
      const judged = workload === 'trivial' && stat === 'p50';
      rows.push([
        `${label} ${stat}`,
        String(local.n),
        ms(remote[stat]),
        ms(local[stat]),
        ratio(remote[stat] / local[stat]),
        `${delta >= 0 ? '+' : ''}${ms(delta)}`,
        judged ? TARGETS.remoteTrivialDelta.text : '',
        judged ? verdict(TARGETS.remoteTrivialDelta, delta) : '',
      ]);
    }
  }
  return rows;
}

export function printReport(results: BenchResults): void {
  console.log(`\nOurs against the reference (${results.referenceName}); ratio = ours / reference:\n`);
  printTable(['figure', 'N', 'ours', 'reference', 'ratio', 'target', 'met'], oursVsReferenceRows(results));
  console.log(`
*   Every reference figure includes an HTTP round trip from Node to wrangler dev (fetch, wrangler's
    dev proxy, the worker's fetch handler, JSON both ways); ours runs in process and pays none. The
    round trip alone was measured in the same rounds, as a POST the reference worker refuses with a
    400 before it builds an executor. "Net of HTTP" subtracts it round by round (p50 of the paired
    differences). The 0.5x target is judged on both the raw and the net figure.
**  A spin wedges wrangler dev, and the reference has no pool to kill a member of: ours only.
*** Reference: the workerd process that runs the reference worker under wrangler dev (the host
    worker and every dynamic worker it loaded; wrangler's dev proxy is a second workerd, not
    counted), for scale; ours: each pool member (one workerd with its supervisor).`);
  console.log(
    '\nRemote overhead: RemoteExecutor to a daemon (codemode-executor serve) over loopback, against the same',
  );
  console.log('IsolateExecutor in process, both native, measured in the same rounds; ratio = remote / in-process:\n');
  printTable(['figure', 'N', 'remote', 'in-process', 'ratio', 'delta', 'target', 'met'], remoteRows(results));
}
