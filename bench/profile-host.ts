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
Or run under \`node --cpu-prof --import tsx\` to profile the whole process, warm-up included.`;

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`--${name} takes a whole number, got ${text}\n${USAGE}`);
  return value;
}

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '400' },
    bursts: { type: 'string', default: '3' },
    warm: { type: 'string', default: '2' },
    profile: { type: 'string' },
    top: { type: 'string', default: '25' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const n = positive('n', values.n);
const bursts = positive('bursts', values.bursts);
const warm = positive('warm', values.warm);
const top = positive('top', values.top);

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

async function burst(dialect: CodemodeExecutor): Promise<number> {
  const start = performance.now();
  await Promise.all(Array.from({ length: n }, () => runDialect('ours (profile)', dialect, THREE_WAITS)));
  return performance.now() - start;
}

const executor = new IsolateExecutor();
const dialect = new CodemodeExecutor(executor);
try {
  console.log(`N = ${n}, ${warm} untimed + ${bursts} measured bursts; load average ${load()}`);
  for (let i = 0; i < warm; i++) console.log(`warm-up burst: ${(await burst(dialect)).toFixed(0)} ms`);
  const spawnsBefore = executor.stats().spawns;
  const total = readCpu();
  const measured = async () => {
    for (let i = 0; i < bursts; i++) {
      const start = readCpu();
      const makespan = await burst(dialect);
      const cpu = cpuSince(start);
      console.log(
        `burst ${i + 1}: ${makespan.toFixed(0)} ms; CPU per execution: host ${(cpu.hostMs / n).toFixed(2)} ms, pool ${(cpu.childrenMs / n).toFixed(2)} ms; load average ${load()}`,
      );
    }
  };
  if (values.profile === undefined) await measured();
  else {
    const { profile } = await profiled(values.profile, measured);
    console.log(summarize(profile, top).join('\n'));
  }
  const cpu = cpuSince(total);
  const runs = n * bursts;
  console.log(
    `over ${runs} executions: host ${(cpu.hostMs / runs).toFixed(2)} ms, pool ${(cpu.childrenMs / runs).toFixed(2)} ms of CPU per execution; processes started during them ${executor.stats().spawns - spawnsBefore}`,
  );
} finally {
  await executor.dispose();
}
