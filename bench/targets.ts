/**
 * The issues' targets for a 2-core machine (issue 3, IsolateExecutor; issue 7, remote; issue 11,
 * the load phase; issue 21, the runtime phase). They are printed beside the figures and judged, never asserted: speed is not a
 * test.
 */

export interface Target {
  text: string;
  met(value: number): boolean;
}

export const TARGETS = {
  trivialP50: { text: '<= 6 ms (warm)', met: (p50: number) => p50 <= 6 },
  trivialVsReference: { text: '<= 0.5x reference', met: (ratio: number) => ratio <= 0.5 },
  perToolCall: { text: '<= 0.5 ms', met: (ms: number) => ms <= 0.5 },
  /** Judged on the slowest sample: every spin must be reported in time. */
  spinReported: { text: '<= 700 ms (every sample)', met: (max: number) => max <= 700 },
  /** Judged on the slowest sample: every kill must heal in time. */
  healed: { text: '<= 100 ms (every sample)', met: (max: number) => max <= 100 },
  remoteTrivialDelta: { text: '<= +1 ms p50', met: (delta: number) => delta <= 1 },
  /** Issue 11, at N = 100, on a warm pool. */
  loadVsIdeal: { text: '<= 1.5x ideal (warm)', met: (ratio: number) => ratio <= 1.5 },
  loadVsReference: { text: '<= 1x reference', met: (ratio: number) => ratio <= 1 },
  /** Issue 11, at N = 400 with default options: every program completes, none refused. */
  loadNoFailure: { text: '0 (none refused)', met: (failures: number) => failures === 0 },
  /** Issue 11, at N = 100: the waiting programs' p95 beside 4 spinners, over their p95 alone. */
  spinP95Growth: { text: '<= 1.2x', met: (ratio: number) => ratio <= 1.2 },
  pssPerExecution: { text: '<= 20 MB', met: (mb: number) => mb <= 20 },
  /** Issue 11: the default (elastic) pool costs a single run nothing; 10% of noise is allowed. */
  defaultPoolTrivial: { text: '<= 1.1x fixed pool', met: (ratio: number) => ratio <= 1.1 },
  defaultPoolPerCall: { text: '<= +0.05 ms', met: (delta: number) => delta <= 0.05 },
  /** Issue 25: the host's CPU per execution of the 3-call program, under load. */
  hostCpuPerExecution: { text: '<= 1 ms', met: (ms: number) => ms <= 1 },
  /** Issue 25, at N = 1000 on a warm pool (ours only). */
  load1000Makespan: { text: '<= 2.5 s (warm)', met: (ms: number) => ms <= 2500 },
  /** Issue 21: each runtime operation against the reference's, net of its HTTP round trips. */
  runtimeVsReference: { text: '<= 1.5x reference net of HTTP', met: (ratio: number) => ratio <= 1.5 },
} as const satisfies Record<string, Target>;

export function verdict(target: Target, value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '?';
  return target.met(value) ? 'yes' : 'NO';
}
