/**
 * Runs the daemon process around a server: prints the listening line, logs, and on SIGTERM or
 * SIGINT drains running executions, refuses new ones, disposes the executor and exits. A second
 * signal during the drain exits at once.
 */
import type { Executor } from '../protocol/types.js';
import { createExecutorServer, type ExecutorServer, type ExecutorServerOptions } from './executor-server.js';
import { formatDraining, formatListening, STOPPED } from './texts.js';

export interface DaemonIo {
  /** One line, newline added. */
  print(line: string): void;
}

const stdoutIo: DaemonIo = { print: (line) => void process.stdout.write(`${line}\n`) };

/** How long the process may take to exit on its own after a clean stop before it is made to. */
const EXIT_GRACE_MS = 2000;

export async function runDaemon(
  executor: Executor,
  options: Omit<ExecutorServerOptions, 'executor' | 'log'>,
  io: DaemonIo = stdoutIo,
): Promise<ExecutorServer> {
  const server = await createExecutorServer({ ...options, executor, log: io.print });
  io.print(formatListening(server.url));
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) process.exit(1);
    stopping = true;
    // The executor may wait on unref'd child processes; without a ref'd handle Node would exit
    // with the stop half done (and without the `stopped` line).
    const keepAlive = setInterval(() => {}, 1000);
    io.print(formatDraining(server.running));
    await server.close();
    await executor.dispose();
    io.print(STOPPED);
    clearInterval(keepAlive);
    // Everything is released; this only guards against a handle someone else left open.
    setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  return server;
}
