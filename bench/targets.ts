/**
 * The issues' targets for a 2-core machine (issue 3, IsolateExecutor; issue 7, remote). They are
 * printed beside the figures and judged, never asserted: speed is not a test.
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
} as const satisfies Record<string, Target>;

export function verdict(target: Target, value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '?';
  return target.met(value) ? 'yes' : 'NO';
}
