/**
 * The interval `npm run bench -- --against` prints beside each ratio: a percentile bootstrap over
 * paired rounds. Checked on synthetic rounds whose true ratio is known.
 */
import { describe, expect, it } from 'vitest';
import { pairedBootstrap, pick } from '../../bench/paired-bootstrap.js';

/** A small seeded generator (mulberry32), so every run of the test draws the same numbers. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Rounds in which a shared load factor drifts, ours costing `trueRatio` times theirs, each with its own noise. */
function rounds(count: number, trueRatio: number, random: () => number): { ours: number[]; theirs: number[] } {
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < count; i++) {
    const load = 1 + 2 * random();
    theirs.push(3 * load * (0.9 + 0.2 * random()));
    ours.push(3 * trueRatio * load * (0.9 + 0.2 * random()));
  }
  return { ours, theirs };
}

const ratioOfMedians =
  (series: { ours: number[]; theirs: number[] }) =>
  (indices: readonly number[]): number =>
    median(pick(series.ours, indices)) / median(pick(series.theirs, indices));

describe('pairedBootstrap', () => {
  it('gives a zero-width interval when every round has the same ratio, however much the rounds differ', () => {
    const theirs = [2, 5, 3, 9, 4];
    const ours = theirs.map((value) => value * 1.1);
    const interval = pairedBootstrap(5, ratioOfMedians({ ours, theirs }), {
      resamples: 500,
      confidence: 0.95,
      random: seeded(1),
    });
    expect(interval.low).toBeCloseTo(1.1, 12);
    expect(interval.high).toBeCloseTo(1.1, 12);
  });

  it('covers the true ratio at least about 95% of the time, no wider than the estimate varies, narrower with more rounds', () => {
    const random = seeded(3);
    const datasets = 150;
    const widths: Record<number, number[]> = { 30: [], 120: [] };
    const estimates: number[] = [];
    let covered = 0;
    for (let d = 0; d < datasets; d++) {
      for (const count of [30, 120] as const) {
        const series = rounds(count, 1.03, random);
        const statistic = ratioOfMedians(series);
        const interval = pairedBootstrap(count, statistic, { resamples: 300, confidence: 0.95, random });
        widths[count]!.push(interval.high - interval.low);
        if (count !== 120) continue;
        estimates.push(statistic(Array.from({ length: count }, (_, i) => i)));
        if (interval.low <= 1.03 && 1.03 <= interval.high) covered += 1;
      }
    }
    // Over 150 datasets a true 95% interval covers at least 88% (chance allows that much below);
    // with a load both sides share, a bootstrap of medians runs somewhat wide, so no upper bound on coverage.
    expect(covered / datasets).toBeGreaterThanOrEqual(0.88);
    // ...but not uselessly wide: within 1.5 times the width the estimate's own spread gives (±1.96 σ).
    const mean = estimates.reduce((sum, value) => sum + value, 0) / datasets;
    const sigma = Math.sqrt(estimates.reduce((sum, value) => sum + (value - mean) ** 2, 0) / datasets);
    expect(median(widths[120]!)).toBeLessThan(1.5 * 2 * 1.96 * sigma);
    // Four times the rounds: about half the width.
    expect(median(widths[120]!)).toBeLessThan(median(widths[30]!) * 0.7);
  });

  it('refuses too few rounds or resamples and a confidence outside (0, 1), naming the value', () => {
    const statistic = () => 1;
    expect(() => pairedBootstrap(1, statistic, { resamples: 500, confidence: 0.95 })).toThrow(
      'a bootstrap needs at least 2 rounds, got 1',
    );
    expect(() => pairedBootstrap(10, statistic, { resamples: 10, confidence: 0.95 })).toThrow(
      'a bootstrap needs at least 100 resamples, got 10',
    );
    expect(() => pairedBootstrap(10, statistic, { resamples: 500, confidence: 95 })).toThrow(
      'confidence must lie between 0 and 1, got 95',
    );
  });
});
