/**
 * `npm run bench [-- --quick]`: the whole benchmark in one process and one run.
 *
 * - Ours against the newest upstream `DynamicWorkerExecutor` under `wrangler dev` (the harness's
 *   `latest` column): a trivial execution and ten sequential tool calls, ours natively (on a
 *   fixed pool, and on one with default options) and through the dialect, the reference over
 *   HTTP, plus the bare HTTP round trip to the same wrangler so it can be subtracted.
 * - The remote overhead: the same workloads natively over loopback to a daemon.
 *   Every contender above runs once per round, in rotating order, so all see the same load.
 * - The load phase (load.ts): N programs at once on ours and on the reference, and trivial
 *   throughput at N = 400.
 * - The runtime phase (runtime.ts): upstream's runtime on ours in Node beside the same runtime in a
 *   Durable Object under wrangler dev: three reads, a pause then an approve, a snippet run.
 * - Ours only: the load at N = 1000, the load with spinning programs mixed in, the pool's PSS
 *   under load, cold start, a spin at a 500 ms bound, healing after a kill, RSS per pool member,
 *   and what confinement costs (cold start and a trivial run, confined against unconfined).
 *
 * `--against <dir>` runs none of that: ours against another built tree instead (against.ts).
 *
 * Everything it starts (wrangler and its workerd, the daemon, our workerd pool) is stopped at the
 * end, on error, and on Ctrl-C.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { messageOf } from '../src/protocol/message-of.js';
import { connect, type RemoteExecutor } from '../src/remote/index.js';
import { AGAINST_LOAD_ROUNDS, benchAgainst } from './against.js';
import { measureBursts, measureSharedSet, printBursts, printSharedSetBursts } from './bursts.js';
import { measureConfinement, printConfinement } from './confinement.js';
import { type Daemon, startDaemon } from './daemon.js';
import { type Contender, interleave } from './interleave.js';
import { coldStart, healAfterKill, memberRss, poolSettled, spinToTimeout } from './isolate-measures.js';
import {
  LOAD_SIZES,
  measureLoad,
  measurePoolMemory,
  measureSpinMix,
  measureThroughput,
  OURS_ONLY_LOAD_SIZES,
  SPINNERS,
} from './load.js';
import { type LoadResults, printLoadReport } from './load-report.js';
import { measureObserving, printObserving } from './observing.js';
import { runDialect, runNative } from './ours.js';
import { note, phase } from './progress.js';
import { type ReferencePeer, startReferencePeer } from './reference-peer.js';
import { type BenchResults, perCall, printReport, SERIES, seriesOf } from './report.js';
import { measureRuntime, printRuntime, type RuntimeResults } from './runtime.js';
import { summarize } from './stats.js';
import { againstText } from './texts.js';
import { unbuiltTree } from './trees.js';
import { WORKLOADS, type Workload } from './workloads.js';

const USAGE = `Usage: npm run bench [-- --quick] [-- --phase runtime|observing|bursts|shared-set] [-- --against <dir>]

  --quick          fewer rounds and samples (a smoke run of about ten seconds)
  --phase runtime  only the runtime phase (upstream's runtime on ours, beside the reference)
  --phase observing  only what observing a run costs (events, spans and a record, against none)
  --phase bursts   only repeated bursts of waiting programs: N = 100 and 400 beside the reference,
                   1000 against the floor, each with and without a 400 ms start delay
                   (with --quick: N = 20 and 60, one measured burst each), then the shared set's
  --phase shared-set  only the bursts of 100 with a bundled set and without it (issue 44): in
                   process, over a daemon, and on the reference (with --quick: N = 20, two each)
${againstText.usageLine}
  --build          run npm run build first, once the options are known good (npm run bench passes it)
  -h, --help`;

const FULL = { warmup: 30, rounds: 300, coldStarts: 10, spins: 6, kills: 10, loadRounds: 3 };
const QUICK = { warmup: 5, rounds: 40, coldStarts: 3, spins: 3, kills: 3, loadRounds: 1 };
const SPIN_BOUND_MS = 500;
/** One process running executions and one warm spare, on both our sides: the same pool in and out of process. */
const POOL = { maxWorkers: 1, spare: 1 };

/** The phases `--phase` may name. */
const PHASES = ['runtime', 'observing', 'bursts', 'shared-set'] as const;
let onlyPhase: (typeof PHASES)[number] | undefined;
/** `--against <dir>`: the other tree, instead of every other phase. */
let againstDir: string | undefined;

function parseCommandLine(): typeof FULL | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        phase: { type: 'string' },
        against: { type: 'string' },
        build: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`bench: ${messageOf(error)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  if (values.phase !== undefined) {
    if (!(PHASES as readonly string[]).includes(values.phase)) {
      console.error(`bench: --phase ${values.phase} is not a phase; the phases are ${PHASES.join(', ')}\n\n${USAGE}`);
      process.exit(2);
    }
    onlyPhase = values.phase as (typeof PHASES)[number];
  }
  if (values.against !== undefined) {
    const problem = values.phase !== undefined ? againstText.withPhase() : unbuiltTree(values.against);
    if (problem !== undefined) {
      console.error(`bench: ${problem}\n\n${USAGE}`);
      process.exit(2);
    }
    againstDir = values.against;
  }
  // After the checks, so that --help and a bad option answer at once rather than after a build.
  if (values.build) execFileSync('npm', ['run', 'build'], { cwd: join(import.meta.dirname, '..'), stdio: 'inherit' });
  return values.quick ? QUICK : FULL;
}

/** Everything this run started, stopped once, in reverse order of need, whatever happened. */
class Resources {
  reference?: ReferencePeer;
  daemon?: Daemon;
  remote?: RemoteExecutor;
  executors: Pick<IsolateExecutor, 'dispose'>[] = [];
  #closing?: Promise<void>;

  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      const steps: Promise<unknown>[] = [
        (async () => {
          await this.remote?.dispose();
          await this.daemon?.stop();
        })(),
        this.reference?.stop() ?? Promise.resolve(),
        ...this.executors.map((executor) => executor.dispose()),
      ];
      const failures = (await Promise.allSettled(steps)).filter(
        (result): result is PromiseRejectedResult => result.status === 'rejected',
      );
      for (const failure of failures)
        console.error(
          `bench: while stopping: ${failure.reason instanceof Error ? failure.reason.message : String(failure.reason)}`,
        );
    })());
  }

  /** Stops the reference and the daemon early, so the ours-only phases run on a quieter machine. */
  async stopPeers(): Promise<void> {
    await this.remote?.dispose();
    await this.daemon?.stop();
    await this.reference?.stop();
  }
}

/**
 * The reference, started again if a burst left wrangler dev unable to answer (it has dropped
 * every connection under 400 at once on a loaded machine), so the next phase still has a peer.
 */
async function referenceAnswering(resources: Resources): Promise<ReferencePeer> {
  const current = resources.reference!;
  try {
    await current.roundTrip();
    return current;
  } catch (error) {
    note(`wrangler dev no longer answers (${messageOf(error)}); starting it again`);
    await current.stop().catch(() => undefined);
    resources.reference = await startReferencePeer();
    return resources.reference;
  }
}

function contenders(
  workload: Workload,
  executor: IsolateExecutor,
  elastic: IsolateExecutor,
  dialect: CodemodeExecutor,
  remote: RemoteExecutor,
  reference: ReferencePeer,
): Contender[] {
  return [
    { name: SERIES.native, once: () => runNative(SERIES.native, executor, workload) },
    { name: SERIES.nativeDefault, once: () => runNative(SERIES.nativeDefault, elastic, workload) },
    { name: SERIES.dialect, once: () => runDialect(SERIES.dialect, dialect, workload) },
    { name: SERIES.remote, once: () => runNative(SERIES.remote, remote, workload) },
    { name: SERIES.reference, once: () => reference.run(workload) },
    { name: SERIES.roundTrip, once: () => reference.roundTrip() },
  ];
}

async function bench(
  plan: typeof FULL,
  resources: Resources,
): Promise<{ results: BenchResults; load: LoadResults; runtime: RuntimeResults }> {
  // Start-up is not measured; both start together to save wall time.
  const [reference, daemon] = await phase('starting wrangler dev (latest column) and the executor daemon', async () => {
    const started = await Promise.allSettled([startReferencePeer(), startDaemon(POOL)]);
    if (started[0].status === 'fulfilled') resources.reference = started[0].value;
    if (started[1].status === 'fulfilled') resources.daemon = started[1].value;
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    return [resources.reference!, resources.daemon!] as const;
  });
  note(`reference: ${reference.name}, workerd ${reference.versions.workerd}; daemon: ${daemon.url}`);

  const coldStartFigures = await phase(
    `cold start, ${plan.coldStarts} samples (a fresh IsolateExecutor each, no spare)`,
    () => coldStart(plan.coldStarts),
  );

  const executor = new IsolateExecutor({ pool: POOL });
  resources.executors.push(executor);
  // Default options: the elastic pool, sized by memory, with its spare.
  const elastic = new IsolateExecutor();
  resources.executors.push(elastic);
  const dialect = new CodemodeExecutor(executor);
  const remote = await phase('connecting to the daemon and warming the pools', async () => {
    resources.remote = await connect(daemon.url, { websocket: WebSocket });
    await executor.execute({ code: 'async () => 1' });
    await elastic.execute({ code: 'async () => 1' });
    await resources.remote.execute({ code: 'async () => 1' });
    await poolSettled(executor);
    await poolSettled(elastic);
    return resources.remote;
  });
  const freshRss = memberRss(executor);

  const series = {} as BenchResults['series'];
  for (const workload of WORKLOADS) {
    series[workload.name] = await phase(
      `${workload.label}: ${plan.warmup} warm-up + ${plan.rounds} measured rounds, each running all ${Object.keys(SERIES).length} contenders`,
      () => interleave(contenders(workload, executor, elastic, dialect, remote, reference), plan),
    );
  }
  const runtime = await runtimePhase(plan, resources);
  await poolSettled(executor);
  const rss = { fresh: freshRss, afterRuns: memberRss(executor), referenceWorkerd: reference.workerdRssMb() };
  const referenceName = reference.name;
  await elastic.dispose();

  const track = (started: IsolateExecutor) => resources.executors.push(started);
  const loadTitle = (sizes: readonly number[]) =>
    `load: N in {${sizes.join(', ')}} programs at once, three 200 ms tool calls each, ours and the reference, ${plan.loadRounds} measured bursts per side`;
  const largest = LOAD_SIZES[LOAD_SIZES.length - 1]!;
  const smaller = LOAD_SIZES.filter((n) => n !== largest);
  const load = await phase(loadTitle(smaller), () => measureLoad(plan, reference, track, smaller));
  // Before the largest burst, in case wrangler dev does not survive it.
  const throughput = await phase('load: trivial throughput, 400 at once, ours and the reference', () =>
    measureThroughput(plan, reference, track),
  );
  const revived = await referenceAnswering(resources);
  load.push(...(await phase(loadTitle([largest]), () => measureLoad(plan, revived, track, [largest]))));

  await phase('stopping wrangler dev and the daemon (the rest is ours only)', () => resources.stopPeers());
  load.push(
    ...(await phase(
      `load: N in {${OURS_ONLY_LOAD_SIZES.join(', ')}} programs at once, ours only, ${plan.loadRounds} measured bursts`,
      () => measureLoad(plan, undefined, track, OURS_ONLY_LOAD_SIZES),
    )),
  );

  const spinMix = await phase(
    `load with ${SPINNERS} spinning programs mixed in, ours only, ${plan.loadRounds} rounds per N`,
    () => measureSpinMix(plan, track),
  );
  const memory = await phase("load: the pool's PSS while 100 and 400 programs wait at once", () =>
    measurePoolMemory(track),
  );

  const spin = await phase(`spin at a ${SPIN_BOUND_MS} ms bound, ${plan.spins} samples`, () =>
    spinToTimeout(executor, SPIN_BOUND_MS, plan.spins),
  );
  const heal = await phase(`kill a running member (pool with a spare), ${plan.kills} samples`, () =>
    healAfterKill(executor, plan.kills),
  );
  const healNoSpare = await phase(`kill a running member (pool without a spare), ${plan.kills} samples`, async () => {
    const bare = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    resources.executors.push(bare);
    await bare.execute({ code: 'async () => 1' });
    return healAfterKill(bare, plan.kills);
  });

  const results: BenchResults = {
    warmup: plan.warmup,
    series,
    coldStart: coldStartFigures,
    spinBound: SPIN_BOUND_MS,
    spin,
    heal,
    healNoSpare,
    rss,
    referenceName,
  };
  const trivialP50 = summarize(seriesOf(series.trivial, SERIES.nativeDefault)).p50;
  const fixedTrivialP50 = summarize(seriesOf(series.trivial, SERIES.native)).p50;
  const defaultPool = {
    trivialP50,
    fixedTrivialP50,
    trivialRatio: trivialP50 / fixedTrivialP50,
    perCallDelta: perCall(results, SERIES.nativeDefault) - perCall(results, SERIES.native),
  };
  return { results, load: { load, throughput, spinMix, memory, defaultPool }, runtime };
}

function runtimePhase(plan: typeof FULL, resources: Resources): Promise<RuntimeResults> {
  return phase(
    `runtime: three reads, a pause then an approve, a snippet run; ${plan.warmup} warm-up + ${plan.rounds} rounds, ours and the reference`,
    () => measureRuntime(plan, resources.reference!, (executor) => resources.executors.push(executor)),
  );
}

/** `--phase runtime`: the reference alone is started, and only the runtime phase runs. */
async function runtimeOnly(plan: typeof FULL, resources: Resources): Promise<void> {
  await phase('starting wrangler dev (latest column)', async () => {
    resources.reference = await startReferencePeer();
  });
  printRuntime(await runtimePhase(plan, resources));
}

/** `--phase bursts`: the reference alone is started, and only the repeated bursts run (bursts.ts). */
async function burstsOnly(quick: boolean, resources: Resources): Promise<void> {
  await phase('starting wrangler dev (latest column)', async () => {
    resources.reference = await startReferencePeer();
  });
  const revive = () => referenceAnswering(resources);
  const figures = await phase('bursts: repeated bursts of waiting programs, ours and the reference', () =>
    measureBursts(quick, resources.reference, revive, (executor) => resources.executors.push(executor)),
  );
  printBursts(figures);
  await sharedSetBursts(quick, resources, revive);
  console.log(
    `\nLoad average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
}

/** The shared bundled set's bursts (bursts.ts): in process, over a daemon, and on the reference. */
async function sharedSetBursts(
  quick: boolean,
  resources: Resources,
  revive: () => Promise<ReferencePeer>,
): Promise<void> {
  const reference = resources.reference === undefined ? undefined : { peer: resources.reference, revive };
  const title = 'bursts: a shared bundled set, with and without it, in process, over a daemon and on the reference';
  const shared = await phase(title, () =>
    measureSharedSet(quick, reference, {
      executor: (executor) => resources.executors.push(executor),
      daemon: (daemon) => {
        resources.daemon = daemon;
      },
    }),
  );
  printSharedSetBursts(shared);
}

/** `--phase shared-set`: the reference alone is started, and only the shared set's bursts run. */
async function sharedSetOnly(quick: boolean, resources: Resources): Promise<void> {
  await phase('starting wrangler dev (latest column)', async () => {
    resources.reference = await startReferencePeer();
  });
  await sharedSetBursts(quick, resources, () => referenceAnswering(resources));
  console.log(
    `\nLoad average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
}

async function main(): Promise<void> {
  const plan = parseCommandLine();
  if (plan === undefined) return;
  const resources = new Resources();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130); // A second Ctrl-C: leave now (the exit hooks still kill what we started).
    interrupted = true;
    console.error(`\nbench: ${signal}, stopping everything it started…`);
    void resources.close().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  console.log(
    `Benchmark${plan === QUICK ? ' (--quick)' : ''}: ${new Date().toISOString()}, ${availableParallelism()} CPUs, node ${process.version}, ` +
      `load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    `Warm-up ${plan.warmup} rounds, then ${plan.rounds} rounds per workload; N per figure is printed beside it.\n`,
  );
  try {
    if (againstDir !== undefined) {
      const loadRounds = plan === QUICK ? AGAINST_LOAD_ROUNDS.quick : AGAINST_LOAD_ROUNDS.full;
      await benchAgainst(againstDir, { ...plan, loadRounds }, (pool) => resources.executors.push(pool));
      return;
    }
    if (onlyPhase === 'runtime') {
      await runtimeOnly(plan, resources);
      return;
    }
    if (onlyPhase === 'observing') {
      const observing = await phase('observing: events, spans and a record, against none', () =>
        measureObserving(plan, (executor) => resources.executors.push(executor)),
      );
      printObserving(observing);
      return;
    }
    if (onlyPhase === 'bursts') {
      await burstsOnly(plan === QUICK, resources);
      return;
    }
    if (onlyPhase === 'shared-set') {
      await sharedSetOnly(plan === QUICK, resources);
      return;
    }
    const { results, load, runtime } = await bench(plan, resources);
    const confinement = await phase("confinement: cold start and trivial runs, 'auto' against 'off'", () =>
      measureConfinement(plan, (executor) => resources.executors.push(executor)),
    );
    printReport(results);
    printLoadReport(load);
    printRuntime(runtime);
    printConfinement(confinement);
    console.log(
      `\nLoad average at the end: ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );
  } catch (error) {
    if (!interrupted) {
      console.error(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    }
  } finally {
    if (!interrupted) await phase('stopping everything this run started', () => resources.close());
  }
}

await main();
