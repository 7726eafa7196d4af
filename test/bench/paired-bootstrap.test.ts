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

/** Rounds in which ours costs `trueRatio` times theirs, each sample with noise of its own. */
function rounds(count: number, trueRatio: number, random: () => number): { ours: number[]; theirs: number[] } {
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < count; i++) {
    theirs.push(3 * (0.5 + random()));
    ours.push(3 * trueRatio * (0.5 + random()));
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

  it('covers the true ratio about 95% of the time, as wide as the estimate varies, narrower with more rounds', () => {
    const random = seeded(3);
    const interval = (count: number) => {
      const statistic = ratioOfMedians(rounds(count, 1.03, random));
      const all = Array.from({ length: count }, (_, i) => i);
      return {
        estimate: statistic(all),
        ...pairedBootstrap(count, statistic, { resamples: 300, confidence: 0.95, random }),
      };
    };
    const datasets = Array.from({ length: 200 }, () => interval(120));
    const covered = datasets.filter(({ low, high }) => low <= 1.03 && 1.03 <= high).length / datasets.length;
    // Over 200 datasets a 95% interval covers between 90% and 99% (chance allows that much); a
    // 90% interval, or one too narrow, falls below.
    expect(covered).toBeGreaterThanOrEqual(0.9);
    expect(covered).toBeLessThanOrEqual(0.99);
    // Its width is what the estimate's own spread across datasets gives, ±1.96 σ, give or take the
    // error of both estimates: a 90% interval (0.84 of it) or the resamples' whole range is outside.
    const estimates = datasets.map(({ estimate }) => estimate);
    const mean = estimates.reduce((sum, value) => sum + value, 0) / estimates.length;
    const sigma = Math.sqrt(estimates.reduce((sum, value) => sum + (value - mean) ** 2, 0) / estimates.length);
    const width = median(datasets.map(({ low, high }) => high - low)) / (2 * 1.96 * sigma);
    expect(width).toBeGreaterThan(0.88);
    expect(width).toBeLessThan(1.2);
    // A quarter of the rounds: about twice the width.
    const fewer = Array.from({ length: 50 }, () => interval(30));
    expect(median(fewer.map(({ low, high }) => high - low))).toBeGreaterThan(
      1.4 * median(datasets.map(({ low, high }) => high - low)),
    );
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
