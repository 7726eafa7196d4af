/**
 * The daemon's Prometheus metrics, through prom-client (every name prefixed `codemode_executor_`).
 * The server counts what crosses it; the pool's state is read at scrape time from the executor's
 * `stats()`, once per scrape, and each run's CPU time from its `observeRuns`, when it has them
 * (IsolateExecutor does).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { IsolateExecutorStats, PoolEnds, RunObserver } from '../../isolate/index.js';
import type { Executor } from '../../protocol/types.js';
import type { HeldBytesScope, HeldRequests } from '../calls/held-requests.js';
import type { DroppedLines } from '../command/stdio-guard.js';
import type { RetainedCounts } from '../retained/retained-counts.js';
import type { ExecutionKind } from '../texts.js';

const METRIC_PREFIX = 'codemode_executor_';

/**
 * prom-client's default metrics of this Node process: one registry per process, since they start a
 * GC observer and an event-loop monitor that nothing stops. Started by the first scrape, so a
 * daemon without an admin listener (or a test that makes many servers) starts none.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX });
  }
  return processRegistry;
}

/** How an execution (or a handle call) ended, as the `outcome` label says it. */
export type ExecutionOutcome = 'ok' | 'error' | 'failed' | 'cancelled' | 'refused';

/** Why a session was refused before it opened. */
export type SessionRefusal =
  | 'token_missing'
  | 'token_wrong'
  | 'draining'
  | 'max_connections'
  | 'unauthenticated_per_peer'
  | 'handshake_timeout'
  | 'proxy_header'
  | 'descriptors';

/** Where the daemon met EMFILE or ENFILE: its listener's accept, or a sandbox process's start. */
export type DescriptorFaultSite = 'accept' | 'spawn';

/** Why the daemon dropped an open session. */
export type DropCause =
  | 'send_buffer'
  | 'heartbeat_lease'
  | 'missed_ping'
  | 'rpc_message'
  | 'rpc_exports'
  | 'rpc_imports';

/** An executor that can report its pool, as IsolateExecutor does. */
interface WithStats {
  stats(): IsolateExecutorStats;
}

function hasStats(executor: Executor): executor is Executor & WithStats {
  return typeof (executor as Partial<WithStats>).stats === 'function';
}

/** An executor that tells each run's CPU time, as IsolateExecutor does. */
interface WithRunReports {
  observeRuns(observer: RunObserver): () => void;
}

function hasRunReports(executor: Executor): executor is Executor & WithRunReports {
  return typeof (executor as Partial<WithRunReports>).observeRuns === 'function';
}

/** The pool reports its memory in MB; Prometheus takes bytes. */
const MIB = 2 ** 20;

/** Pool member states, as the `state` label of `pool_members` says them. */
const MEMBER_STATES = ['starting', 'idle', 'busy', 'draining'] as const;

/** Why a member ended, as the `cause` label of `pool_members_ended_total` says it. */
const END_CAUSES = ['reaped', 'recycled', 'killed', 'died'] as const satisfies readonly (keyof PoolEnds)[];

/** Seconds: from a trivial run to a spin stopped at a long bound. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds of CPU: a trivial run costs a few milliseconds, a spin up to its bound. */
const CPU_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class DaemonMetrics {
  readonly #registry = new Registry();
  readonly #executions: Counter<'kind' | 'outcome'>;
  readonly #durations: Histogram<'kind' | 'outcome'>;
  readonly #sessions: Gauge;
  readonly #sessionsOpened: Counter;
  readonly #sessionsRefused: Counter<'reason'>;
  readonly #drops: Counter<'cause'>;
  readonly #bytesIn: Counter;
  readonly #bytesOut: Counter;
  readonly #retainedIdleClosed: Counter;
  readonly #heldRefused: Counter<'scope'>;
  readonly #descriptorFaults: Counter<'where'>;
  #open = 0;
  /** Stops listening to the executor's runs (see close). */
  #unobserveRuns: (() => void) | undefined;

  constructor(executor: Executor) {
    const registers = [this.#registry];
    const name = (suffix: string) => `${METRIC_PREFIX}${suffix}`;
    this.#executions = new Counter({
      name: name('executions_total'),
      help: 'Executions and handle calls, by kind and by how they ended (refused: before they ran).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#durations = new Histogram({
      name: name('execution_duration_seconds'),
      help: 'Wall-clock time of an execution or handle call at the daemon, queueing included.',
      labelNames: ['kind', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#sessions = new Gauge({ name: name('sessions'), help: 'Open client sessions.', registers });
    this.#sessionsOpened = new Counter({ name: name('sessions_opened_total'), help: 'Sessions opened.', registers });
    this.#sessionsRefused = new Counter({
      name: name('sessions_refused_total'),
      help: 'Connection attempts refused before a session opened, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.#drops = new Counter({
      name: name('sessions_dropped_total'),
      help: 'Open sessions the daemon dropped, by cause.',
      labelNames: ['cause'],
      registers,
    });
    this.#bytesIn = new Counter({
      name: name('received_bytes_total'),
      help: 'Bytes of WebSocket messages received from clients.',
      registers,
    });
    this.#bytesOut = new Counter({
      name: name('sent_bytes_total'),
      help: 'Bytes of WebSocket messages sent to clients.',
      registers,
    });
    this.#retainedIdleClosed = new Counter({
      name: name('retained_idle_closed_total'),
      help: 'Retained executions the daemon closed because they went unused for --retained-idle-timeout-ms.',
      registers,
    });
    this.#heldRefused = new Counter({
      name: name('held_request_bytes_refused_total'),
      help: 'Requests refused because the bytes held by requests in flight would pass a bound, by scope (connection, daemon).',
      labelNames: ['scope'],
      registers,
    });
    this.#descriptorFaults = new Counter({
      name: name('descriptor_faults_total'),
      help: 'Times the daemon found no file descriptor left (EMFILE, ENFILE), by where: accept (a connection could not be taken), spawn (an execution failed because no sandbox process could start).',
      labelNames: ['where'],
      registers,
    });
    if (hasStats(executor)) this.#poolGauges(executor, name);
    if (hasRunReports(executor)) this.#runCpu(executor, name);
  }

  executionSettled(kind: ExecutionKind, outcome: ExecutionOutcome, seconds?: number): void {
    this.#executions.inc({ kind, outcome });
    if (seconds !== undefined) this.#durations.observe({ kind, outcome }, seconds);
  }

  sessionOpened(): void {
    this.#open += 1;
    this.#sessions.set(this.#open);
    this.#sessionsOpened.inc();
  }

  sessionClosed(): void {
    this.#open -= 1;
    this.#sessions.set(this.#open);
  }

  sessionRefused(reason: SessionRefusal): void {
    this.#sessionsRefused.inc({ reason });
  }

  clientDropped(cause: DropCause): void {
    this.#drops.inc({ cause });
  }

  received(bytes: number): void {
    this.#bytesIn.inc(bytes);
  }

  sent(bytes: number): void {
    this.#bytesOut.inc(bytes);
  }

  descriptorFault(where: DescriptorFaultSite): void {
    this.#descriptorFaults.inc({ where });
  }

  /** Reads the daemon's open file descriptors and their limit at scrape time (Linux). */
  watchDescriptors(read: () => { open: number | undefined; limit: number | undefined }): void {
    const registers = [this.#registry];
    new Gauge({
      name: `${METRIC_PREFIX}open_descriptors`,
      help: "File descriptors the daemon's process holds open (its sessions, its sandbox processes' pipes and sockets, its files).",
      registers,
      collect() {
        const { open } = read();
        if (open !== undefined) this.set(open);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}descriptor_limit`,
      help: "The file descriptors the daemon's process may open (ulimit -n); near it, new connections are shed (refused, reason descriptors).",
      registers,
      collect() {
        const { limit } = read();
        if (limit !== undefined) this.set(limit);
      },
    });
  }

  retainedIdleClosed(): void {
    this.#retainedIdleClosed.inc();
  }

  /** Reads the daemon's retained executions at scrape time, by whether their connection is open. */
  watchRetained(retained: { counts(): RetainedCounts }): void {
    new Gauge({
      name: `${METRIC_PREFIX}retained_held`,
      help: 'Retained executions the daemon holds, by whether the connection that retained them is still open (open) or gone (gone: closed at --retained-idle-timeout-ms unless used).',
      labelNames: ['connection'],
      registers: [this.#registry],
      collect() {
        const { open, gone } = retained.counts();
        this.set({ connection: 'open' }, open);
        this.set({ connection: 'gone' }, gone);
      },
    });
  }

  /** Reads the bytes held by requests in flight at scrape time, beside their two bounds. */
  watchHeldRequests(held: HeldRequests): void {
    const registers = [this.#registry];
    new Gauge({
      name: `${METRIC_PREFIX}held_request_bytes`,
      help: 'Bytes held by requests in flight (waiting for a sandbox process or running), all connections together.',
      registers,
      collect() {
        this.set(held.total);
      },
    });
    const { maxHeldRequestBytes, maxHeldRequestBytesTotal } = held.limits;
    const limit = new Gauge({
      name: `${METRIC_PREFIX}held_request_bytes_limit`,
      help: 'The bounds on those bytes: per connection (--max-held-request-bytes) and for the daemon (--max-held-request-bytes-total).',
      labelNames: ['scope'],
      registers,
    });
    limit.set({ scope: 'connection' }, maxHeldRequestBytes);
    limit.set({ scope: 'daemon' }, maxHeldRequestBytesTotal);
  }

  heldBytesRefused(scope: HeldBytesScope): void {
    this.#heldRefused.inc({ scope });
  }

  /** Reads, at scrape time, the lines the daemon dropped on a stdout or stderr whose reader went away. */
  watchDroppedLines(dropped: () => DroppedLines): void {
    const seen: DroppedLines = { stdout: 0, stderr: 0 };
    new Counter({
      name: `${METRIC_PREFIX}log_lines_dropped_total`,
      help: 'Lines the daemon dropped because its stdout or stderr failed (its reader went away: EPIPE), by stream.',
      labelNames: ['stream'],
      registers: [this.#registry],
      collect() {
        const now = dropped();
        for (const stream of ['stdout', 'stderr'] as const) {
          this.inc({ stream }, now[stream] - seen[stream]);
          seen[stream] = now[stream];
        }
      },
    });
  }

  /** The Prometheus text exposition of every metric, the process's own included. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    const registry = Registry.merge([this.#registry, processMetrics()]);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  /** The server closed: an executor that outlives it no longer feeds its histograms. */
  close(): void {
    this.#unobserveRuns?.();
    this.#unobserveRuns = undefined;
  }

  #poolGauges(executor: WithStats, name: (suffix: string) => string): void {
    const registers = [this.#registry];
    // One snapshot serves every collect of a scrape: they run one after another, in one turn.
    let snapshot: IsolateExecutorStats | undefined;
    const stats = () => {
      if (snapshot === undefined) {
        snapshot = executor.stats();
        queueMicrotask(() => {
          snapshot = undefined;
        });
      }
      return snapshot;
    };
    new Gauge({
      name: name('pool_members'),
      help: 'Sandbox processes of the pool, by state (starting, idle, busy, draining).',
      labelNames: ['state'],
      registers,
      collect() {
        const { states } = stats();
        for (const state of MEMBER_STATES) this.set({ state }, states[state]);
      },
    });
    new Gauge({
      name: name('pool_max_workers'),
      help: 'The most sandbox processes that run executions at once (pool.maxWorkers, sized by memory by default).',
      registers,
      collect() {
        this.set(stats().maxWorkers);
      },
    });
    new Gauge({
      name: name('pool_memory_budget_bytes'),
      help: 'The memory the sandbox processes may use together (pool.memoryBudgetMb); beyond it executions wait.',
      registers,
      collect() {
        this.set(stats().memory.budgetMb * MIB);
      },
    });
    new Gauge({
      name: name('pool_memory_used_bytes'),
      help: "The sandbox processes' memory as the budget counts it: their private memory, and the pages they share once.",
      registers,
      collect() {
        this.set(Math.round(stats().memory.usedMb * MIB));
      },
    });
    // The pool counts these since it started; each scrape adds what it counted since the last.
    let spawnsSeen = 0;
    new Counter({
      name: name('pool_members_started_total'),
      help: 'Sandbox processes the pool started.',
      registers,
      collect() {
        const { spawns } = stats();
        this.inc(spawns - spawnsSeen);
        spawnsSeen = spawns;
      },
    });
    const endsSeen: PoolEnds = { reaped: 0, recycled: 0, killed: 0, died: 0 };
    new Counter({
      name: name('pool_members_ended_total'),
      help: 'Sandbox processes the pool lost, by cause (reaped: idle; recycled: worn; killed: because of their run; died: on their own).',
      labelNames: ['cause'],
      registers,
      collect() {
        const { ends } = stats();
        for (const cause of END_CAUSES) {
          this.inc({ cause }, ends[cause] - endsSeen[cause]);
          endsSeen[cause] = ends[cause];
        }
      },
    });
    new Gauge({
      name: name('queue_length'),
      help: 'Executions waiting for a sandbox process.',
      registers,
      collect() {
        this.set(stats().queued);
      },
    });
    new Gauge({
      name: name('retained_executions'),
      help: 'Retained executions not yet closed.',
      registers,
      collect() {
        this.set(stats().retained);
      },
    });
  }

  #runCpu(executor: WithRunReports, name: (suffix: string) => string): void {
    const cpu = new Histogram({
      name: name('execution_cpu_seconds'),
      help: 'CPU time of each execution or handle call, as its sandbox process spent it (where the platform tells: Linux).',
      labelNames: ['kind'],
      buckets: CPU_BUCKETS,
      registers: [this.#registry],
    });
    this.#unobserveRuns = executor.observeRuns(({ kind, cpuMs }) => {
      if (cpuMs !== undefined) cpu.observe({ kind }, cpuMs / 1000);
    });
  }
}
