/**
 * Runs the daemon process around a server: prints its log (timestamped text or JSON; a stdout or
 * stderr whose reader went away drops lines and counts them, stdio-guard.ts), and on
 * SIGTERM, SIGINT, or the loss of its parent process drains (`/readyz` 503 at once, new sessions
 * and executions refused, running ones finish within the drain timeout), disposes the executor and
 * exits 0. A second signal during the drain exits at once, with status 1.
 */
import type { Executor } from '../../protocol/types.js';
import { createExecutorServer, type ExecutorServer } from '../executor-server.js';
import { DEFAULT_LOG_FORMAT, type LogFormat, type LogSink, lineSink } from '../observe/log.js';
import type { ExecutorServerOptions } from '../options/server-options.js';
import { formatAdminListening, formatDraining, formatListening, formatParentGone, STOPPED } from '../texts.js';
import { guardProcessStdio } from './stdio-guard.js';

export interface DaemonIo {
  /** One line, newline added. */
  print(line: string): void;
}

export interface DaemonOptions extends Omit<ExecutorServerOptions, 'executor' | 'log'> {
  /** `text` (default): `<ISO time> <level> <message>`; `json`: one object per line. */
  logFormat?: LogFormat | undefined;
  /** Keep serving when the parent process goes away (nohup and the like). Default false: stop as on SIGTERM. */
  detached?: boolean | undefined;
}

/** How long the process may take to exit on its own after a clean stop before it is made to. */
const EXIT_GRACE_MS = 2000;
/** How often the parent is looked for; a wrapper that died is noticed within this. */
const PARENT_POLL_MS = 500;

export async function runDaemon(
  executor: Executor,
  options: DaemonOptions = {},
  io?: DaemonIo,
): Promise<ExecutorServer> {
  const { logFormat = DEFAULT_LOG_FORMAT, detached = false, ...serverOptions } = options;
  // The daemon owns its process's stdout and stderr: a reader that goes away must not end it.
  const stdio = guardProcessStdio();
  const log: LogSink = lineSink(logFormat, io?.print ?? ((line) => stdio.print(line)));
  const server = await createExecutorServer({ ...serverOptions, executor, log });
  server.metrics.watchDroppedLines(() => stdio.dropped());
  log(formatListening(server.url));
  if (server.adminUrl !== undefined) log(formatAdminListening(server.adminUrl));
  const confinement = confinementSummary(executor);
  if (confinement !== undefined) log(confinement);
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) process.exit(1);
    stopping = true;
    // The executor may wait on unref'd child processes; without a ref'd handle Node would exit
    // with the stop half done (and without the `stopped` line).
    const keepAlive = setInterval(() => {}, 1000);
    log(formatDraining(server.running));
    await server.close();
    await executor.dispose();
    log(STOPPED);
    clearInterval(keepAlive);
    // Everything is released; this only guards against a handle someone else left open.
    setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  if (!detached) watchParent(log, () => void stop());
  return server;
}

/**
 * Which confinement mode is in force and why, for an executor that reports it (IsolateExecutor's
 * `stats().confinement.summary`).
 */
function confinementSummary(executor: Executor): string | undefined {
  const withStats = executor as Partial<{ stats(): { confinement?: { summary?: unknown } } }>;
  if (typeof withStats.stats !== 'function') return undefined;
  const summary = withStats.stats().confinement?.summary;
  return typeof summary === 'string' ? summary : undefined;
}

/**
 * A wrapper (npx, a shell, a supervisor that signals only its direct child) may exit and leave the
 * daemon to init. Linux offers no parent-death signal to Node, so the parent pid is polled: once
 * it changes, the daemon was orphaned.
 */
function watchParent(log: LogSink, stop: () => void): void {
  const parent = process.ppid;
  // Started by init (pid 1, a container's entry point) or with no parent: nothing to watch.
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    log(formatParentGone(parent), 'warn');
    stop();
  }, PARENT_POLL_MS);
  timer.unref();
}
