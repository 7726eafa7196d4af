/**
 * Shared helpers for the benchmarks: timing a function many times, and summarizing and printing
 * the samples. Read p50 as typical and min as the floor; on a shared 2-core box p95 is noisy.
 */

export interface Summary {
  n: number;
  min: number;
  p25: number;
  p50: number;
  p75: number;
  p95: number;
  max: number;
  mean: number;
}

/** The nearest-rank percentile of ascending samples. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p25: percentile(sorted, 25),
    p50: percentile(sorted, 50),
    p75: percentile(sorted, 75),
    p95: percentile(sorted, 95),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
  };
}

/**
 * The standard error of a median, from the spread of the samples: about 1.25 σ / √n, with σ
 * estimated from the interquartile range (σ ≈ IQR / 1.35), which a few slow outliers do not inflate.
 */
export function medianStandardError(summary: Summary): number {
  return (1.2533 * ((summary.p75 - summary.p25) / 1.349)) / Math.sqrt(summary.n);
}

/** Round-by-round differences `a[i] - b[i]` of two series measured in the same rounds. */
export function pairedDifferences(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new Error(`paired series differ in length: ${a.length} and ${b.length}`);
  return a.map((value, i) => value - b[i]!);
}

export interface TimingOptions {
  warmup: number;
  n: number;
}

/** Milliseconds per call of `work`, after `warmup` untimed calls. Calls run one after another. */
export async function time(work: () => Promise<unknown>, { warmup, n }: TimingOptions): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await work();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await work();
    samples.push(performance.now() - start);
  }
  return samples;
}

export function ms(value: number | undefined, digits = 2): string {
  return value === undefined || Number.isNaN(value) ? '–' : `${value.toFixed(digits)} ms`;
}

/** A ratio as `0.42x`, or a dash when either side is missing. */
export function ratio(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(digits)}x`;
}

/** Prints rows as an aligned plain-text table. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}
