/**
 * Interleaved measurement: in every round each contender runs once, so all of them see the same
 * machine load as it drifts (the machine is shared). The order rotates from round to round, so no
 * contender always runs right after the same other one (and inherits its leftover work).
 */

export interface Contender {
  name: string;
  /** One timed operation; throws if its outcome is wrong. */
  once(): Promise<void>;
}

export interface InterleaveOptions {
  /** Untimed rounds first. */
  warmup: number;
  /** Timed rounds. */
  rounds: number;
}

/** Samples in ms per contender name; index i of every list is round i, so lists can be paired. */
export async function interleave(
  contenders: readonly Contender[],
  { warmup, rounds }: InterleaveOptions,
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(contenders.map((contender) => [contender.name, []]));
  for (let round = -warmup; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(((round + k) % contenders.length) + contenders.length) % contenders.length]!;
      const start = performance.now();
      await contender.once();
      const elapsed = performance.now() - start;
      if (round >= 0) samples.get(contender.name)!.push(elapsed);
    }
  }
  return samples;
}
