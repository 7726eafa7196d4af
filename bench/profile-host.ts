/**
 * The host's CPU per execution under load, for profiling: bursts of N programs at once (the load
 * phase's three sequential 200 ms tool calls) on `new CodemodeExecutor(new IsolateExecutor())`
 * with default options. Prints, per measured burst and over them all, the makespan, the host's
 * CPU per execution (`process.cpuUsage()`) and the pool's (every process under this one, from
 * /proc), with the load average beside them: the machine may be shared.
 *
 *   npx tsx bench/profile-host.ts [--n 400] [--bursts 3] [--warm 2]
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile-host.ts --n 400
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { profiled, summarize } from './cpu-profile.js';
import { runDialect } from './ours.js';
import { cpuSince, readCpu } from './process-cpu.js';
import { THREE_WAITS } from './workloads.js';

const USAGE = `Usage: npx tsx bench/profile-host.ts [--n <programs at once>] [--bursts <measured>] [--warm <untimed>]
  --n       programs started together in each burst (default 400)
  --bursts  measured bursts (default 3)
  --warm    untimed bursts first, which grow the pool (default 2)
  --profile <file.cpuprofile>  profile the host over the measured bursts only (node:inspector),
            write the profile there and print where its CPU went
  --top     lines per table of that summary (default 25)
  --compare-cache  each measured round runs a burst on the default dialect and one on a dialect
            with normalizeCacheChars: 0 (the code parsed on every run), over the same pool, in
            alternating order; prints each side's CPU per execution
Or run under \`node --cpu-prof --import tsx\` to profile the whole process, warm-up included.`;

function wholeNumber(name: string, text: string, least: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < least)
    throw new Error(`--${name} takes a whole number of at least ${least}, got ${text}\n${USAGE}`);
  return value;
}

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '400' },
    bursts: { type: 'string', default: '3' },
    warm: { type: 'string', default: '2' },
    profile: { type: 'string' },
    top: { type: 'string', default: '25' },
    'compare-cache': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const n = wholeNumber('n', values.n, 1);
const bursts = wholeNumber('bursts', values.bursts, 1);
const warm = wholeNumber('warm', values.warm, 0);
const top = wholeNumber('top', values.top, 1);

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

async function burst(dialect: CodemodeExecutor): Promise<number> {
  const start = performance.now();
  await Promise.all(Array.from({ length: n }, () => runDialect('ours (profile)', dialect, THREE_WAITS)));
  return performance.now() - start;
}

interface Side {
  label: string;
  dialect: CodemodeExecutor;
  hostMs: number;
  childrenMs: number;
  runs: number;
}

const executor = new IsolateExecutor();
const sides: Side[] = [
  { label: 'default', dialect: new CodemodeExecutor(executor), hostMs: 0, childrenMs: 0, runs: 0 },
];
if (values['compare-cache'])
  sides.push({
    label: 'normalizeCacheChars: 0',
    dialect: new CodemodeExecutor(executor, { normalizeCacheChars: 0 }),
    hostMs: 0,
    childrenMs: 0,
    runs: 0,
  });

const perRun = (ms: number, runs: number) => (runs === 0 ? '–' : `${(ms / runs).toFixed(3)} ms`);

try {
  console.log(`N = ${n}, ${warm} untimed + ${bursts} measured bursts per side; load average ${load()}`);
  for (let i = 0; i < warm; i++)
    for (const side of sides)
      console.log(`warm-up burst (${side.label}): ${(await burst(side.dialect)).toFixed(0)} ms`);
  const spawnsBefore = executor.stats().spawns;
  const measured = async () => {
    for (let i = 0; i < bursts; i++) {
      // The order alternates, so neither side always runs into the other's leftovers.
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const start = readCpu();
        const makespan = await burst(side.dialect);
        const cpu = cpuSince(start);
        side.hostMs += cpu.hostMs;
        side.childrenMs += cpu.childrenMs;
        side.runs += n;
        console.log(
          `burst ${i + 1} (${side.label}): ${makespan.toFixed(0)} ms; CPU per execution: host ${perRun(cpu.hostMs, n)}, pool ${perRun(cpu.childrenMs, n)}; load average ${load()}`,
        );
      }
    }
  };
  if (values.profile === undefined) await measured();
  else {
    const { profile } = await profiled(values.profile, measured);
    console.log(summarize(profile, top).join('\n'));
  }
  for (const side of sides)
    console.log(
      `${side.label}, over ${side.runs} executions: CPU per execution: host ${perRun(side.hostMs, side.runs)}, pool ${perRun(side.childrenMs, side.runs)}`,
    );
  console.log(`processes started during the measured bursts: ${executor.stats().spawns - spawnsBefore}`);
  const { memory, members } = executor.stats();
  console.log(
    `pool memory as its budget counts it: peak ${memory.peakMb.toFixed(0)} MB of pool.memoryBudgetMb ${memory.budgetMb} MB; members now: ${members.length}`,
  );
} finally {
  await executor.dispose();
}
