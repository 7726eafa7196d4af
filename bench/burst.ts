/**
 * One burst of the load phase: N programs started together, each timed, and the whole. On our
 * side it also reads the host's CPU over the burst (`process.cpuUsage()`) and samples the pool's
 * resident memory, whose reading costs are left out of the CPU figure.
 */
import type { IsolateExecutor } from '../src/isolate/index.js';
import { messageOf } from '../src/protocol/message-of.js';
import { note } from './progress.js';

/** How often a burst on our side sums its members' RSS. */
const POOL_SAMPLE_MS = 250;

export interface Burst {
  makespanMs: number;
  /** Per program that succeeded, ms from its start to its result. */
  latencies: number[];
  /** Programs that failed (a wrong result, a rejection), and how many of them were QUEUE_FULL. */
  failures: number;
  queueFull: number;
  firstFailure: string | undefined;
  /** Ours: the host process's CPU (user + system) over the burst, sampling excluded. */
  hostCpuMs: number | undefined;
  /** Ours: the largest sum of the members' RSS seen during the burst. */
  peakPoolRssMb: number | undefined;
  /** Ours: the pool's memory as its budget counts it (`stats().memory`), at its peak so far, and the budget. */
  poolMemory: { peakMb: number; budgetMb: number } | undefined;
}

const cpuNowMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Sums the members' RSS every POOL_SAMPLE_MS; what each reading costs is counted apart. */
function samplePool(pool: IsolateExecutor): { stop(): { peakMb: number; costMs: number } } {
  let peakMb = 0;
  let costMs = 0;
  const sample = () => {
    const start = cpuNowMs();
    const sum = pool.stats().members.reduce((total, member) => total + (member.rssMb ?? 0), 0);
    peakMb = Math.max(peakMb, sum);
    costMs += cpuNowMs() - start;
  };
  const timer = setInterval(sample, POOL_SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peakMb, costMs };
    },
  };
}

/** Runs `n` programs at once and times each and the whole. Failures are counted, not thrown. */
export async function burst(n: number, once: () => Promise<void>, pool?: IsolateExecutor): Promise<Burst> {
  const latencies: number[] = [];
  let failures = 0;
  let queueFull = 0;
  let firstFailure: string | undefined;
  const sampler = pool === undefined ? undefined : samplePool(pool);
  const cpuStart = cpuNowMs();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const begun = performance.now();
      try {
        await once();
        latencies.push(performance.now() - begun);
      } catch (error) {
        failures += 1;
        if ((error as { code?: unknown }).code === 'QUEUE_FULL') queueFull += 1;
        firstFailure ??= messageOf(error).split('\n')[0];
      }
    }),
  );
  const makespanMs = performance.now() - start;
  const cpuMs = cpuNowMs() - cpuStart;
  const sampled = sampler?.stop();
  return {
    makespanMs,
    latencies,
    failures,
    queueFull,
    firstFailure,
    hostCpuMs: sampled === undefined ? undefined : cpuMs - sampled.costMs,
    peakPoolRssMb: sampled?.peakMb,
    poolMemory: pool === undefined ? undefined : pool.stats().memory,
  };
}

export function describeFailures(side: string, n: number, result: Burst): void {
  if (result.failures > 0)
    note(
      `${side}, N = ${n}: ${result.failures} of ${n} failed (${result.queueFull} QUEUE_FULL): ${result.firstFailure}`,
    );
}
