/**
 * Ours over the wire: `new CodemodeExecutor(await connect(url))` to a real daemon process this side
 * starts (`codemode-executor serve`) and stops. Cases run exactly as on `ours` (the same
 * `describeOurCall`, the same `countHostWaits: false` wrapper); only the native executor differs.
 *
 * The daemon runs from `src/` under tsx, not from `dist/`: the catalogue spec runs `ours` from the
 * sources, so both columns then test the same code, and a stale build cannot pass for a fresh one.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { connect, type RemoteExecutor, type WebSocketConstructor } from '../../src/remote/index.js';
import { TOKEN_ENV } from '../../src/server/cli-args.js';
import { formatListening } from '../../src/server/texts.js';
import { runDialectCase, withHostWaitsUncounted } from './ours.js';
import type { Side } from './side.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The daemon must not outlive this process even when it dies by SIGKILL, when no 'exit' hook runs.
 * Its stdin is a pipe whose only writer is this process, so the kernel closes it with us; on its
 * end-of-file the daemon stops itself gracefully (its workerd processes go with it). `dispose`
 * ends the pipe on purpose, which is the same graceful stop.
 */
const STOP_WITH_PARENT = `process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();`;

/** One sandbox process, as on `ours`: the catalogue runs one case at a time on a shared machine. */
const DAEMON_ARGS = ['serve', '--port', '0', '--max-workers', '1'];

/** How long the daemon may take to print its address (tsx compiles the sources on a busy machine). */
const LISTEN_TIMEOUT_MS = 60_000;
/** How long a graceful stop may take before the daemon is killed. */
const STOP_TIMEOUT_MS = 15_000;
/** The daemon logs a line per execution; only the end is kept for error messages. */
const OUTPUT_TAIL_LINES = 40;

const LISTENING_PREFIX = formatListening('');

/** Node 20 has no global WebSocket; the ws package's constructor also takes `{ headers }`. */
const NodeWebSocket = WebSocket as unknown as WebSocketConstructor;

function formatDaemonTrouble(why: string, output: readonly string[]): string {
  const tail = output.length === 0 ? '(no output)' : output.join('\n');
  return `The ours-remote daemon (${['src/server/cli.ts', ...DAEMON_ARGS].join(' ')}) ${why}. Its output:\n${tail}`;
}

interface DaemonProcess {
  url: string;
  /** Why the daemon is no longer running (with its output), or undefined while it runs. */
  gone(): string | undefined;
  /** Stops the daemon gracefully, killing it if it does not exit in time. Idempotent. */
  stop(): Promise<void>;
}

/** Spawns the daemon and resolves once it prints `listening on <url>`; rejects with its output otherwise. */
async function startDaemon(): Promise<DaemonProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(STOP_WITH_PARENT)}`, 'src/server/cli.ts', ...DAEMON_ARGS],
    // An ambient token would make the daemon refuse us; on loopback none is needed.
    { cwd: ROOT, env: { ...process.env, [TOKEN_ENV]: '' } },
  );
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
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
    })());

  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(formatDaemonTrouble(`did not print "${LISTENING_PREFIX}<url>" within ${LISTEN_TIMEOUT_MS} ms`, output))), LISTEN_TIMEOUT_MS);
    void exited.then(() => reject(new Error(formatDaemonTrouble(`exited (${status}) before listening`, output))));
    child.once('error', (error) => reject(new Error(formatDaemonTrouble(`could not be spawned: ${error.message}`, output))));
  });
  try {
    const gone = () => (status === undefined || stopping ? undefined : formatDaemonTrouble(`exited (${status}) during the run`, output));
    return { url: await Promise.race([address, failed]), gone, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export async function startRemoteSide(): Promise<Side> {
  const daemon = await startDaemon();
  let native: RemoteExecutor;
  try {
    native = await connect(daemon.url, { websocket: NodeWebSocket });
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  const dialect = new CodemodeExecutor(native);
  const uncounted = new CodemodeExecutor(withHostWaitsUncounted(native));

  return {
    name: 'ours-remote',
    async run(item) {
      // A dead daemon is harness breakage, not every later case's result.
      const gone = daemon.gone();
      if (gone !== undefined) throw new Error(gone);
      return runDialectCase(item, dialect, uncounted);
    },
    async dispose() {
      try {
        await native.dispose();
      } finally {
        await daemon.stop();
      }
    },
  };
}
