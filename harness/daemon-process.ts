/**
 * The executor daemon as a child process: `codemode-executor serve` from `src/` under tsx on a free
 * loopback port, waited for until it prints its address, stopped gracefully, and never left
 * running. The ours-remote side and the benchmark both start it here.
 *
 * It runs from the sources, not from `dist/`, so it tests the same code as the in-process side and
 * a stale build cannot pass for a fresh one.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { TOKEN_ENV } from '../src/server/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = 'src/server/cli.ts';

/**
 * The daemon must not outlive us even when we die by SIGKILL, when no 'exit' hook runs. Its stdin
 * is a pipe whose only writer is this process, so the kernel closes it with us; on end-of-file the
 * daemon stops itself gracefully (its workerd processes go with it). `stop()` ends the pipe on purpose.
 */
const STOP_WITH_PARENT = `process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();`;

/** How long the daemon may take to print its address (tsx compiles the sources on a busy machine). */
const LISTEN_TIMEOUT_MS = 60_000;
/** How long a graceful stop may take before the daemon is killed. */
const STOP_TIMEOUT_MS = 15_000;
/** The daemon logs a line per execution; only the end is kept for error messages. */
const OUTPUT_TAIL_LINES = 40;
/**
 * The daemon's start-up line, `listening on <url>`. Found anywhere in a line, so a timestamp or
 * a structured log format around it does not hide it.
 */
const LISTENING = /listening on (wss?:\/\/[^\s"]+)/;

export interface DaemonProcessOptions {
  /** Who started it, for error messages: "The <label> daemon (...) exited". */
  label: string;
  /** Flags after `serve`; `--port 0` is always first, so a free port is used unless overridden. */
  args: readonly string[];
}

export interface DaemonProcess {
  url: string;
  /** The end of what the daemon printed. */
  output(): string;
  /** Why the daemon is no longer running (with its output), or undefined while it runs. */
  gone(): string | undefined;
  /** Stops the daemon gracefully, killing it if it does not exit in time. Idempotent. */
  stop(): Promise<void>;
}

function formatDaemonTrouble(
  label: string,
  command: readonly string[],
  why: string,
  output: readonly string[],
): string {
  const tail = output.length === 0 ? '(no output)' : output.join('\n');
  return `The ${label} daemon (${command.join(' ')}) ${why}. Its output:\n${tail}`;
}

/** Spawns the daemon and resolves once it prints `listening on <url>`; rejects with its output otherwise. */
export async function startDaemonProcess({ label, args }: DaemonProcessOptions): Promise<DaemonProcess> {
  const command = [CLI, 'serve', '--port', '0', ...args];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(STOP_WITH_PARENT)}`, ...command],
    {
      cwd: ROOT,
      // An ambient token would make the daemon refuse us; on loopback none is needed.
      env: { ...process.env, [TOKEN_ENV]: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const trouble = (why: string) => formatDaemonTrouble(label, command, why, output);
  let status: string | undefined;
  const exited = once(child, 'close').then(([code, signal]) => {
    status = signal === null ? `code ${code as number}` : String(signal);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  // Both streams are read to the end, so the pipe never fills and stalls the daemon.
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
        const listening = LISTENING.exec(line);
        if (listening) resolve(listening[1]!);
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
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
    })());

  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(trouble(`did not print "listening on <url>" within ${LISTEN_TIMEOUT_MS} ms`))),
      LISTEN_TIMEOUT_MS,
    );
    void exited.then(() => reject(new Error(trouble(`exited (${status}) before listening`))));
    child.once('error', (error) => reject(new Error(trouble(`could not be spawned: ${error.message}`))));
  });
  try {
    const gone = () => (status === undefined || stopping ? undefined : trouble(`exited (${status}) during the run`));
    return { url: await Promise.race([address, failed]), output: () => output.join('\n'), gone, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
