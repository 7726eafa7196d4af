/**
 * The executor daemon for the remote benchmark: `codemode-executor serve` in a child process on a
 * free loopback port, stopped gracefully afterwards, and never left running.
 *
 * It runs from `src/` under tsx, as the in-process side does, so both sides run the same code and
 * a stale `dist/` cannot stand in for the sources.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { TOKEN_ENV } from '../src/server/cli-args.js';
import { formatListening } from '../src/server/texts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The daemon must not outlive us even when we die by SIGKILL, when no exit hook runs. Its stdin is
 * a pipe whose only writer is this process, so the kernel closes it with us; on end-of-file the
 * daemon stops itself gracefully (its workerd processes go with it). `stop()` ends the pipe on purpose.
 */
const STOP_WITH_PARENT = `process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();`;

const LISTEN_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const OUTPUT_TAIL_LINES = 40;
const LISTENING_PREFIX = formatListening('');

export interface DaemonOptions {
  maxWorkers: number;
  spare: number;
}

export interface Daemon {
  url: string;
  args: readonly string[];
  /** Stops the daemon gracefully, SIGKILLing it if it does not exit in time. Idempotent. */
  stop(): Promise<void>;
}

function daemonTrouble(args: readonly string[], why: string, output: readonly string[]): string {
  return `The benchmark's daemon (${args.join(' ')}) ${why}. Its output:\n${output.length === 0 ? '(no output)' : output.join('\n')}`;
}

export async function startDaemon({ maxWorkers, spare }: DaemonOptions): Promise<Daemon> {
  const args = ['src/server/cli.ts', 'serve', '--port', '0', '--max-workers', String(maxWorkers), '--spare', String(spare)];
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(STOP_WITH_PARENT)}`, ...args], {
    cwd: ROOT,
    // An ambient token would make the daemon refuse us; on loopback none is needed.
    env: { ...process.env, [TOKEN_ENV]: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const closed = once(child, 'close');
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  // Both streams are read to the end (one log line per execution), so the pipe never stalls the daemon.
  const output: string[] = [];
  const keep = (line: string) => {
    output.push(line);
    if (output.length > OUTPUT_TAIL_LINES) output.shift();
  };
  const address = new Promise<string>((resolve) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        keep(line);
        if (line.startsWith(LISTENING_PREFIX)) resolve(line.slice(LISTENING_PREFIX.length));
      }
    });
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) if (line !== '') keep(line);
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await closed;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
    })());

  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(daemonTrouble(args, `did not print "${LISTENING_PREFIX}<url>" within ${LISTEN_TIMEOUT_MS} ms`, output))), LISTEN_TIMEOUT_MS);
    void closed.then(([code, signal]) => reject(new Error(daemonTrouble(args, `exited (${signal ?? `code ${String(code)}`}) before listening`, output))));
    child.once('error', (error) => reject(new Error(daemonTrouble(args, `could not be spawned: ${error.message}`, output))));
  });
  try {
    return { url: await Promise.race([address, failed]), args, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
