/**
 * `npm run bench -- --phase bursts` (issue 43): the pattern agent hosts have, repeated bursts of
 * N waiting programs on default options, without growing the pool to N first. Each program makes
 * three sequential 200 ms tool calls (the load phase's program). Per N and start delay, a fresh
 * `IsolateExecutor` (the dialect over it) takes two warm-up bursts, then measured bursts that
 * alternate with the reference's (one POST per program to wrangler dev, the `latest` column).
 *
 * - N = 100 and 400 on ours and the reference; at 400 the reference's wrangler dev may fail a
 *   burst or exit: the comparison uses only the bursts it survived, and its failures are printed
 *   beside the figure (a reference that no longer answers is started again).
 * - N = 1000 on ours only, against the floor: N times the members' CPU per execution (measured in
 *   the same bursts, from /proc) over the cores, plus the 600 ms of tool calls.
 * - Every N with and without a 400 ms start delay injected before each member's start
 *   (member/start-hook.ts), as on a machine whose processes start slowly.
 * - Ours: the host's CPU per execution, spawns included, and the members'.
 */
import { availableParallelism } from 'node:os';
import { WebSocket } from 'ws';
import { type Service, startDaemonProcess } from '../harness/processes.js';
import { bundlePackages, type PackageModuleMap } from '../src/bundle/index.js';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { withStartDelay } from '../src/isolate/host/member/start-hook.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { connect } from '../src/remote/index.js';
import { type Burst, burst } from './burst.js';
import { runDialect } from './ours.js';
import { cpuSince, readCpu } from './process-cpu.js';
import { note } from './progress.js';
import type { ReferencePeer } from './reference-peer.js';
import { ms, printTable, ratio } from './stats.js';
import { THREE_WAITS, WAIT_TOOL_MS } from './workloads.js';

/** The sizes compared with the reference, and the size run on ours alone (against the floor). */
const FULL = { compared: [100, 400], oursOnly: [1000], rounds: 3 } as const;
/** `--quick`: small N, one measured burst each, for developing on a loaded machine. */
const QUICK = { compared: [20], oursOnly: [60], rounds: 1 } as const;
const WARM_UP_BURSTS = 2;
/** The start delays injected before each member's start: none, and a slow machine's. */
const START_DELAYS_MS = [0, 400] as const;

interface OursBurst extends Burst {
  /** The members' CPU (every process under this one, live or reaped) over the burst, in ms. */
  memberCpuMs: number;
  /** Processes the pool started during the burst. */
  spawns: number;
}

export interface BurstFigures {
  n: number;
  startDelayMs: number;
  ours: OursBurst[];
  /** Empty for the size run on ours alone. */
  reference: Burst[];
  /** The pool at the end: its members, and its start times by step (`stats().starts`). */
  members: number;
  meanStartMs: number;
}

export type ReviveReference = () => Promise<ReferencePeer>;

async function oursBurst(executor: IsolateExecutor, dialect: CodemodeExecutor, n: number): Promise<OursBurst> {
  const spawnsBefore = executor.stats().spawns;
  const cpu = readCpu();
  const result = await burst(n, () => runDialect('ours (bursts)', dialect, THREE_WAITS), executor);
  const { childrenMs } = cpuSince(cpu);
  return { ...result, memberCpuMs: childrenMs, spawns: executor.stats().spawns - spawnsBefore };
}

/** One reference burst; a wrangler dev that no longer answers is started again for the next. */
async function referenceBurst(reference: { peer: ReferencePeer; revive: ReviveReference }, n: number) {
  const result = await burst(n, () => reference.peer.run(THREE_WAITS));
  if (result.failures > 0) reference.peer = await reference.revive();
  return result;
}

export async function measureBursts(
  quick: boolean,
  peer: ReferencePeer | undefined,
  revive: ReviveReference,
  track: (executor: IsolateExecutor) => void,
): Promise<BurstFigures[]> {
  const plan = quick ? QUICK : FULL;
  const reference = peer === undefined ? undefined : { peer, revive };
  const figures: BurstFigures[] = [];
  const sizes = [
    ...plan.compared.map((n) => ({ n, compared: true })),
    ...plan.oursOnly.map((n) => ({ n, compared: false })),
  ];
  for (const { n, compared } of sizes) {
    for (const startDelayMs of START_DELAYS_MS) {
      const executor = new IsolateExecutor(startDelayMs > 0 ? withStartDelay({}, startDelayMs) : {});
      track(executor);
      const dialect = new CodemodeExecutor(executor);
      const withReference = compared && reference !== undefined;
      try {
        for (let i = 0; i < WARM_UP_BURSTS; i += 1) {
          await oursBurst(executor, dialect, n);
          // The reference's warm-up once per N: it has no start delay to vary.
          if (withReference && startDelayMs === START_DELAYS_MS[0]) await referenceBurst(reference, n);
        }
        const ours: OursBurst[] = [];
        const theirs: Burst[] = [];
        for (let round = 0; round < plan.rounds; round += 1) {
          const referenceFirst = round % 2 === 1;
          if (withReference && referenceFirst) theirs.push(await referenceBurst(reference, n));
          ours.push(await oursBurst(executor, dialect, n));
          if (withReference && !referenceFirst) theirs.push(await referenceBurst(reference, n));
        }
        const { members, starts } = executor.stats();
        figures.push({ n, startDelayMs, ours, reference: theirs, members: members.length, meanStartMs: starts.meanMs });
        note(
          `N = ${n}, start delay ${startDelayMs} ms: ours ${ours.map((b) => ms(b.makespanMs, 0)).join(', ')}` +
            (withReference
              ? `; reference ${theirs.map((b) => `${ms(b.makespanMs, 0)}${b.failures > 0 ? ` (${b.failures} failed)` : ''}`).join(', ')}`
              : ''),
        );
      } finally {
        await executor.dispose();
      }
    }
  }
  return figures;
}

const median = (values: number[]): number | undefined => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The floor of a burst of N: its members' CPU spread over the cores, plus the tool calls' 600 ms. */
function floorMs(n: number, memberCpuPerExecutionMs: number): number {
  return (n * memberCpuPerExecutionMs) / availableParallelism() + 3 * WAIT_TOOL_MS;
}

export function printBursts(figures: BurstFigures[]): void {
  console.log(
    `\nRepeated bursts (issue 43): N programs at once, each ${THREE_WAITS.label}, default options, after ${WARM_UP_BURSTS} warm-up bursts; median of the measured bursts`,
  );
  const rows = figures.map((figure) => {
    const oursMs = median(figure.ours.map((b) => b.makespanMs));
    const survived = figure.reference.filter((b) => b.failures === 0);
    const referenceMs = median(survived.map((b) => b.makespanMs));
    const lost = figure.reference.length - survived.length;
    const failed = figure.ours.reduce((sum, b) => sum + b.failures, 0);
    const executions = figure.n * figure.ours.length;
    const hostCpu = figure.ours.reduce((sum, b) => sum + (b.hostCpuMs ?? 0), 0) / executions;
    const memberCpu = figure.ours.reduce((sum, b) => sum + b.memberCpuMs, 0) / executions;
    const floor = floorMs(figure.n, memberCpu);
    const against =
      figure.reference.length === 0
        ? `floor ${ms(floor, 0)}: ${ratio(oursMs === undefined ? undefined : oursMs / floor)}`
        : `${ms(referenceMs, 0)}: ${ratio(oursMs === undefined || referenceMs === undefined ? undefined : oursMs / referenceMs)}` +
          (lost > 0
            ? ` (the reference failed ${lost} of ${figure.reference.length} bursts: ${figure.reference.find((b) => b.failures > 0)?.firstFailure ?? ''})`
            : '');
    return [
      String(figure.n),
      `${figure.startDelayMs} ms`,
      `${ms(oursMs, 0)}${failed > 0 ? ` (${failed} failed)` : ''}`,
      against,
      ms(hostCpu),
      ms(memberCpu),
      String(figure.ours.reduce((sum, b) => sum + b.spawns, 0)),
      `${figure.members}, ${ms(figure.meanStartMs, 0)}`,
    ];
  });
  printTable(
    [
      'N',
      'start delay',
      'ours',
      'against (reference, or floor)',
      'host CPU / exec',
      'member CPU / exec',
      'spawns (measured bursts)',
      'members, mean start',
    ],
    rows,
  );
}

/**
 * The shared-set variant (issue 44): "100 executions that share a bundled set start in the burst
 * bench within 5% of the same bench without modules, after the first". The same bursts of the same
 * program, on default options, with and without the set (zod and date-fns, from bundlePackages)
 * passed as `modules` to every execution: in process, over a daemon started on default options,
 * and on the reference (upstream's DynamicWorkerExecutor under wrangler dev, the set as its
 * constructor's `modules`, posted with each request). The program does not import the set, so what
 * is measured is what carrying it costs. After the warm-up bursts, the first burst with the set (it
 * bundles, and over the daemon puts each module once) is printed apart; then bursts with and
 * without it alternate, each side first in turn. Beside the reference, the same bursts of bare
 * POSTs with and without the map in the body: what posting the map costs the reference before any
 * executor, which an upstream host that holds its map in the Worker does not pay.
 */
const SHARED_SET = ['zod', 'date-fns'] as const;
const SHARED_SET_PLAN = { full: { n: 100, rounds: 6 }, quick: { n: 20, rounds: 2 } } as const;
/** The clause's bound on the ratio of a burst with the set to one without. */
const SHARED_SET_BOUND = 1.05;
const REFERENCE_SIDE = 'reference';

interface CpuBurst extends Burst {
  /** This process and every process under it (members, the daemon and its members, wrangler dev), in ms. */
  allCpuMs: number;
}

export interface SharedSetFigures {
  side: string;
  n: number;
  setBytes: number;
  first: CpuBurst;
  without: CpuBurst[];
  with: CpuBurst[];
}

/** One side's program, with the set or without it: ours in process, a daemon's client, the reference. */
interface SharedSetSide {
  side: string;
  once(modules: PackageModuleMap | undefined): Promise<void>;
  /** After a burst in which some program failed (the reference's wrangler dev is started again). */
  failed?(): Promise<void>;
}

function dialectSide(side: string, dialect: Pick<CodemodeExecutor, 'execute'>): SharedSetSide {
  const withModules = (modules: PackageModuleMap): Pick<CodemodeExecutor, 'execute'> => ({
    execute: (code, providers) => dialect.execute(code, providers, { modules }),
  });
  return {
    side,
    once: (modules) =>
      runDialect(`${side} (shared set)`, modules === undefined ? dialect : withModules(modules), THREE_WAITS),
  };
}

async function cpuBurst(n: number, side: SharedSetSide, modules?: PackageModuleMap): Promise<CpuBurst> {
  const cpu = readCpu();
  const result = await burst(n, () => side.once(modules));
  const { hostMs, childrenMs } = cpuSince(cpu);
  if (result.failures > 0) await side.failed?.();
  return { ...result, allCpuMs: hostMs + childrenMs };
}

async function measureSharedSetBursts(
  quick: boolean,
  side: SharedSetSide,
  modules: () => Promise<PackageModuleMap>,
): Promise<SharedSetFigures> {
  const { n, rounds } = quick ? SHARED_SET_PLAN.quick : SHARED_SET_PLAN.full;
  for (let i = 0; i < WARM_UP_BURSTS; i += 1) await cpuBurst(n, side);
  const set = await modules();
  const setBytes = Object.values(set).reduce((sum, module) => sum + Buffer.byteLength(module.js), 0);
  const first = await cpuBurst(n, side, set);
  const without: CpuBurst[] = [];
  const withSet: CpuBurst[] = [];
  for (let round = 0; round < rounds; round += 1) {
    if (round % 2 === 1) withSet.push(await cpuBurst(n, side, set));
    without.push(await cpuBurst(n, side));
    if (round % 2 === 0) withSet.push(await cpuBurst(n, side, set));
  }
  const failures = (bursts: CpuBurst[]) => bursts.reduce((sum, b) => sum + b.failures, 0);
  note(
    `shared set, ${side.side}, N = ${n}: without ${without.map((b) => ms(b.makespanMs, 0)).join(', ')}; with ${withSet.map((b) => ms(b.makespanMs, 0)).join(', ')}` +
      (failures([...without, ...withSet]) > 0 ? `; ${failures([...without, ...withSet])} programs failed` : ''),
  );
  return { side: side.side, n, setBytes, first, without, with: withSet };
}

/** The median of the bursts in which no program failed. */
const cleanMedian = (bursts: CpuBurst[], of: (b: CpuBurst) => number) =>
  median(bursts.filter((b) => b.failures === 0).map(of));

export function printSharedSetBursts(figures: SharedSetFigures[]): void {
  const [any] = figures;
  if (any === undefined) return;
  console.log(
    `\nA shared bundled set (issue 44): N programs at once, each ${THREE_WAITS.label}, with ${SHARED_SET.join(' and ')} (${Math.round(any.setBytes / 1024)} KiB, bundlePackages) passed as modules to each, and without; ` +
      `median of ${any.with.length} bursts each (those in which no program failed), alternating, after ${WARM_UP_BURSTS} warm-up bursts and the first with the set; bound ${SHARED_SET_BOUND}x`,
  );
  const rows = figures.map((figure) => {
    const makespan = (bursts: CpuBurst[]) => cleanMedian(bursts, (b) => b.makespanMs);
    const p50 = (bursts: CpuBurst[]) => median(bursts.filter((b) => b.failures === 0).flatMap((b) => b.latencies));
    const cpu = (bursts: CpuBurst[]) => cleanMedian(bursts, (b) => b.allCpuMs / figure.n);
    const all = [...figure.without, ...figure.with];
    const failed = all.reduce((sum, b) => sum + b.failures, 0);
    const clean = all.filter((b) => b.failures === 0).length;
    const pair = (of: (bursts: CpuBurst[]) => number | undefined) => {
      const without = of(figure.without);
      const withSet = of(figure.with);
      return `${ms(without, 1)} / ${ms(withSet, 1)}: ${ratio(without === undefined || withSet === undefined ? undefined : withSet / without, 3)}`;
    };
    return [
      figure.side,
      String(figure.n),
      pair(makespan),
      pair(p50),
      pair(cpu),
      ms(figure.first.makespanMs, 0),
      failed === 0 ? '0' : `${failed} (${clean} of ${all.length} bursts clean)`,
    ];
  });
  printTable(
    [
      'side',
      'N',
      'burst: without / with',
      'program p50: without / with',
      'CPU / exec (all processes): without / with',
      'first burst with the set',
      'programs failed',
    ],
    rows,
  );
  const reference = figures.find((figure) => figure.side === REFERENCE_SIDE);
  if (reference === undefined) return;
  const burstOf = (bursts: CpuBurst[]) => cleanMedian(bursts, (b) => b.makespanMs);
  const against = (ours: CpuBurst[], theirs: CpuBurst[]) => {
    const [a, b] = [burstOf(ours), burstOf(theirs)];
    return ratio(a === undefined || b === undefined ? undefined : a / b, 3);
  };
  for (const figure of figures.filter((f) => !f.side.startsWith(REFERENCE_SIDE)))
    console.log(
      `${figure.side} against the reference, burst: without the set ${against(figure.without, reference.without)}, with it ${against(figure.with, reference.with)}`,
    );
}

export interface SharedSetPeer {
  peer: ReferencePeer;
  revive: ReviveReference;
}

/** The reference's sides: its executions, and bare POSTs with and without the map in the body. */
function referenceSides(reference: SharedSetPeer): SharedSetSide[] {
  const failed = async () => {
    reference.peer = await reference.revive();
  };
  const name = REFERENCE_SIDE;
  return [
    { side: name, once: (modules) => reference.peer.run(THREE_WAITS, modules), failed },
    { side: `${name}: the POST alone`, once: (modules) => reference.peer.roundTrip(modules), failed },
  ];
}

/**
 * The shared-set variant on every side: a fresh IsolateExecutor in process, a daemon's client, and
 * the reference when it runs.
 */
export async function measureSharedSet(
  quick: boolean,
  reference: SharedSetPeer | undefined,
  track: { executor(executor: Pick<IsolateExecutor, 'dispose'>): void; daemon(daemon: Service): void },
): Promise<SharedSetFigures[]> {
  const figures: SharedSetFigures[] = [];
  const modules = () => bundlePackages([...SHARED_SET]);
  const native = new IsolateExecutor({});
  track.executor(native);
  try {
    figures.push(await measureSharedSetBursts(quick, dialectSide('in process', new CodemodeExecutor(native)), modules));
  } finally {
    await native.dispose();
  }
  const daemon = await startDaemonProcess({ label: "shared-set bench's", args: [] });
  track.daemon(daemon);
  try {
    const remote = new CodemodeExecutor(await connect(daemon.url, { websocket: WebSocket }));
    track.executor(remote);
    try {
      figures.push(await measureSharedSetBursts(quick, dialectSide('over the daemon', remote), modules));
    } finally {
      await remote.dispose();
    }
  } finally {
    await daemon.stop();
  }
  if (reference !== undefined)
    for (const side of referenceSides(reference)) figures.push(await measureSharedSetBursts(quick, side, modules));
  return figures;
}
