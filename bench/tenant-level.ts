/**
 * `npx tsx bench/tenant-level.ts [--quick] [--runs-per-member N]` (issue 43): what the tenant level
 * (`pool.runsPerMember`) gains on the burst pattern. Bursts of N waiting programs (three
 * sequential 200 ms tool calls each, the load phase's program), all of one tenant, on default
 * options otherwise, at level 1 (one execution per process) and at level N; per level and size a
 * fresh `IsolateExecutor` (the dialect over it) takes two warm-up bursts, then measured bursts.
 * Reports the makespan (median of the measured bursts), the host's CPU per execution (spawns
 * included) and the members', the spawns, and the members at the end.
 */
import { parseArgs } from 'node:util';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { burst } from './burst.js';
import { runDialect } from './ours.js';
import { cpuSince, readCpu } from './process-cpu.js';
import { ms, printTable } from './stats.js';
import { THREE_WAITS } from './workloads.js';

const FULL = { sizes: [100, 400, 1000], rounds: 3 } as const;
const QUICK = { sizes: [20, 60], rounds: 1 } as const;
const WARM_UP_BURSTS = 2;
const DEFAULT_RUNS_PER_MEMBER = 8;

interface LevelFigure {
  n: number;
  runsPerMember: number;
  makespansMs: number[];
  failures: number;
  hostCpuPerExecutionMs: number;
  memberCpuPerExecutionMs: number;
  spawns: number;
  members: number;
}

async function measure(n: number, runsPerMember: number, rounds: number): Promise<LevelFigure> {
  const executor = new IsolateExecutor({ pool: { runsPerMember } });
  const dialect = new CodemodeExecutor(executor, { tenant: 'bench' });
  const once = () => runDialect('ours (tenant level)', dialect, THREE_WAITS);
  try {
    for (let i = 0; i < WARM_UP_BURSTS; i += 1) await burst(n, once, executor);
    const spawnsBefore = executor.stats().spawns;
    const cpu = readCpu();
    const bursts = [];
    for (let round = 0; round < rounds; round += 1) bursts.push(await burst(n, once, executor));
    const { hostMs, childrenMs } = cpuSince(cpu);
    const executions = n * rounds;
    return {
      n,
      runsPerMember,
      makespansMs: bursts.map((b) => b.makespanMs),
      failures: bursts.reduce((sum, b) => sum + b.failures, 0),
      hostCpuPerExecutionMs: hostMs / executions,
      memberCpuPerExecutionMs: childrenMs / executions,
      spawns: executor.stats().spawns - spawnsBefore,
      members: executor.stats().members.length,
    };
  } finally {
    await executor.dispose();
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean' }, 'runs-per-member': { type: 'string' }, sizes: { type: 'string' } },
  });
  const plan = values.quick === true ? QUICK : FULL;
  const level = Number(values['runs-per-member'] ?? DEFAULT_RUNS_PER_MEMBER);
  if (!Number.isInteger(level) || level < 2) {
    console.error(
      `bench/tenant-level: --runs-per-member must be an integer of 2 or more, got ${values['runs-per-member']}`,
    );
    process.exit(2);
  }
  const sizes = values.sizes === undefined ? plan.sizes : values.sizes.split(',').map(Number);
  const figures: LevelFigure[] = [];
  for (const n of sizes) {
    for (const runsPerMember of [1, level]) {
      const figure = await measure(n, runsPerMember, plan.rounds);
      figures.push(figure);
      console.error(`N = ${n}, level ${runsPerMember}: ${figure.makespansMs.map((m) => ms(m, 0)).join(', ')}`);
    }
  }
  console.log(
    `\nThe tenant level (issue 43): N programs of one tenant at once, each ${THREE_WAITS.label}, after ${WARM_UP_BURSTS} warm-up bursts; median of ${plan.rounds} measured bursts`,
  );
  printTable(
    [
      'N',
      'runsPerMember',
      'makespan',
      'failed',
      'host CPU / exec',
      'member CPU / exec',
      'spawns (measured)',
      'members',
    ],
    figures.map((figure) => [
      String(figure.n),
      String(figure.runsPerMember),
      ms(median(figure.makespansMs), 0),
      String(figure.failures),
      ms(figure.hostCpuPerExecutionMs),
      ms(figure.memberCpuPerExecutionMs),
      String(figure.spawns),
      String(figure.members),
    ]),
  );
}

await main();
