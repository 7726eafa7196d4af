/** What `npm run bench -- --against <dir>` (against.ts, trees.ts) prints and fails with. */

export const againstText = {
  /** The `--against` line of run.ts's usage. */
  usageLine:
    '  --against <dir>  ours (this tree) against another built tree, interleaved in one run: trivial p50,\n' +
    '                   per tool call and the N = 100 load, with each ratio and its 95% interval',
  withPhase: () => '--against and --phase do not combine; --against runs its own phases',
  noDirectory: (dir: string) => `--against ${dir}: no such directory`,
  noBuild: (dir: string, file: string) =>
    `--against ${dir}: ${file} is missing; build that tree first (npm run build in ${dir})`,
  noExport: (dir: string, file: string, name: string) =>
    `--against ${dir}: ${file} exports no ${name}; is ${dir} a checkout of this project?`,
  wrongOutcome: (side: string, code: string, outcome: unknown) =>
    `${side}: ${code} returned ${JSON.stringify(outcome)}; the benchmark stops rather than time a broken tree`,
  growFailed: (failed: number, n: number, first: unknown) =>
    `${failed} of ${n} programs growing the pool failed, the first with ${JSON.stringify(first)}`,
  growTooSlow: (members: number, boundMs: number) => `the pool did not grow to ${members} members within ${boundMs} ms`,
  loadFailures: (side: string, failed: number, first: string | undefined) =>
    `${side}: ${failed} programs of the measured bursts failed (left out of the latencies), the first with: ${first}`,
  fewRounds: (rounds: number, enough: number) =>
    `\nThe load's intervals come from ${rounds} paired rounds: too few for a bootstrap (${enough} or more), read them as the spread of a smoke run.`,
  header: (ours: string, theirs: string) => `Ours: ${ours}\nTheirs: ${theirs}`,
  figuresTitle: (resamples: number) =>
    `\nOurs against theirs; ratio = ours / theirs; 95% interval: percentile bootstrap over paired rounds (${resamples} resamples):\n`,
  notes: `
Within 5%: "yes" when the interval's upper end is at most 1.05 (ours no more than 5% slower),
"NO" when its lower end is above 1.05, "unclear" when the interval spans 1.05 (more rounds, or a
quieter machine, narrow it). Sequential figures: pool { maxWorkers: 1, spare: 1 } on both trees,
every round runs all four contenders in rotating order. Load: each tree its own executor with
default options, grown to N members; the bursts alternate between the trees, one tree at a time.`,
};
