/**
 * The daemon's Prometheus metrics, through prom-client (every name prefixed `codemode_executor_`).
 * The server counts what crosses it; the pool's state is read at scrape time from the executor's
 * `stats()`, when it has one (IsolateExecutor does).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { IsolateExecutorStats } from '../isolate/index.js';
import type { Executor } from '../protocol/types.js';
import type { ExecutionKind } from './texts.js';

const METRIC_PREFIX = 'codemode_executor_';

/** How an execution (or a handle call) ended, as the `outcome` label says it. */
export type ExecutionOutcome = 'ok' | 'error' | 'failed' | 'cancelled' | 'refused';

/** Why a session was refused before it opened. */
export type SessionRefusal =
  | 'token_missing'
  | 'token_wrong'
  | 'draining'
  | 'max_connections'
  | 'unauthenticated_per_peer'
  | 'handshake_timeout';

/** Why the daemon dropped an open session. */
export type DropCause = 'send_buffer' | 'heartbeat_lease' | 'missed_ping';

/** An executor that can report its pool, as IsolateExecutor does. */
interface WithStats {
  stats(): IsolateExecutorStats;
}

function hasStats(executor: Executor): executor is Executor & WithStats {
  return typeof (executor as Partial<WithStats>).stats === 'function';
}

/** Pool member states, as the `state` label of `pool_members` says them. */
const MEMBER_STATES = ['starting', 'idle', 'busy', 'draining'] as const;

function membersByState(stats: IsolateExecutorStats): Record<(typeof MEMBER_STATES)[number], number> {
  const counts = { starting: stats.starting, idle: 0, busy: 0, draining: 0 };
  for (const member of stats.members) {
    if (member.busy) counts.busy += 1;
    else if (member.draining) counts.draining += 1;
    else counts.idle += 1;
  }
  return counts;
}

/** Seconds: from a trivial run to a spin stopped at a long bound. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly #executions: Counter<'kind' | 'outcome'>;
  readonly #durations: Histogram<'kind' | 'outcome'>;
  readonly #sessions: Gauge;
  readonly #sessionsOpened: Counter;
  readonly #sessionsRefused: Counter<'reason'>;
  readonly #drops: Counter<'cause'>;
  readonly #bytesIn: Counter;
  readonly #bytesOut: Counter;
  #open = 0;

  constructor(executor: Executor) {
    const registers = [this.registry];
    const name = (suffix: string) => `${METRIC_PREFIX}${suffix}`;
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
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
    if (hasStats(executor)) this.#poolGauges(executor, name);
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

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #poolGauges(executor: WithStats, name: (suffix: string) => string): void {
    const registers = [this.registry];
    new Gauge({
      name: name('pool_members'),
      help: 'Sandbox processes of the pool, by state (starting, idle, busy, draining).',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = membersByState(executor.stats());
        for (const state of MEMBER_STATES) this.set({ state }, counts[state]);
      },
    });
    new Gauge({
      name: name('queue_length'),
      help: 'Executions waiting for a sandbox process.',
      registers,
      collect() {
        this.set(executor.stats().queued);
      },
    });
    new Gauge({
      name: name('retained_executions'),
      help: 'Retained executions not yet closed.',
      registers,
      collect() {
        this.set(executor.stats().retained);
      },
    });
  }
}
