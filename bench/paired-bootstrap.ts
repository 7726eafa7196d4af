/**
 * A percentile bootstrap over paired rounds: the interval of a statistic computed from rounds in
 * which both trees ran. Resampling whole rounds (the same indices for both trees) keeps what a
 * round shared, the machine's load at that moment, paired, so load drift cancels in a ratio rather
 * than widening it.
 */

export interface BootstrapOptions {
  /** Resamples drawn. */
  resamples: number;
  /** Coverage of the interval, 0.95 for a 95% interval. */
  confidence: number;
  /** Uniform in [0, 1); Math.random unless a test wants it repeatable. */
  random?: () => number;
}

export interface Interval {
  low: number;
  high: number;
}

/**
 * The interval of `statistic` over `rounds` paired rounds: `statistic` gets the round indices of
 * one resample (with repeats) and computes from those rounds of every series it reads.
 */
export function pairedBootstrap(
  rounds: number,
  statistic: (indices: readonly number[]) => number,
  { resamples, confidence, random = Math.random }: BootstrapOptions,
): Interval {
  if (!Number.isInteger(rounds) || rounds < 2) throw new Error(`a bootstrap needs at least 2 rounds, got ${rounds}`);
  if (!(confidence > 0 && confidence < 1)) throw new Error(`confidence must lie between 0 and 1, got ${confidence}`);
  if (!Number.isInteger(resamples) || resamples < 100)
    throw new Error(`a bootstrap needs at least 100 resamples, got ${resamples}`);
  const values: number[] = [];
  const indices = new Array<number>(rounds);
  for (let draw = 0; draw < resamples; draw++) {
    for (let i = 0; i < rounds; i++) indices[i] = Math.floor(random() * rounds);
    values.push(statistic(indices));
  }
  values.sort((a, b) => a - b);
  const tail = (1 - confidence) / 2;
  return { low: quantile(values, tail), high: quantile(values, 1 - tail) };
}

/** The samples of one resample's rounds, `samples[i]` for each index (with repeats). */
export function pick(samples: readonly number[], indices: readonly number[]): number[] {
  return indices.map((index) => samples[index]!);
}

/** Linear interpolation between the closest ranks of ascending `sorted`. */
function quantile(sorted: readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}
