/**
 * Starts real daemon processes for the remote tests and guarantees none outlives its test file:
 * every process is tracked, and `stopAllDaemons` (afterAll) resumes and kills what is left.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { messageOfLogLine } from '../../src/server/observe/log.js';
import { builtSinceSources, ROOT } from './build-state.js';

/** The build's last step writes the worker bundles (scripts/bundle-workers.ts): a build that has them is whole. */
const BUILT_LAST = 'dist/isolate/workerd/harness.js';

/**
 * The daemon's CLI from the build when the build is whole and newer than every source (npm test
 * builds first): it listens in a third of the time the sources take under tsx, which loads them
 * and bundles the worker scripts in every daemon. Otherwise, as in a lone run after an edit, from
 * the sources under tsx, so the tests never depend on a fresh build and a stale one is never tested.
 */
function daemonCommand(): string[] {
  return builtSinceSources(BUILT_LAST)
    ? ['dist/server/cli.js', 'serve']
    : ['--import', 'tsx', 'src/server/cli.ts', 'serve'];
}

const CLI = daemonCommand();
/** The real daemon announcing protocol version 2. */
const MISMATCH = ['--import', 'tsx', 'test/support/fixtures/mismatch-daemon.ts'];
/** Lean defaults: one sandbox process, no warm spare (2 cores serve every helper's suites). */
const LEAN = ['--max-workers', '1', '--spare', '0'];

export interface Daemon {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcessWithoutNullStreams;
  /** The message of every stdout line so far: the line without its timestamp and level. */
  readonly lines: string[];
  /** Every stdout line as printed. */
  readonly raw: string[];
  readonly stderr: string[];
  /** Resolves with the exit code (or the signal) when the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line (past or future) matching. */
  waitForLine(pattern: RegExp): Promise<string>;
  kill(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProcessWithoutNullStreams>();

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Runs the daemon under `ulimit -n <fdLimit>` (through sh, which then execs node: the pid stays the daemon's). */
  fdLimit?: number;
}

/** Spawns `codemode-executor serve` with the lean defaults first (later flags win), without waiting for it to listen. */
export function spawnDaemon(args: string[], options: SpawnOptions = {}): Omit<Daemon, 'url' | 'port'> {
  return spawnNode([...CLI, ...LEAN, ...args], options);
}

function spawnNode(args: string[], options: SpawnOptions): Omit<Daemon, 'url' | 'port'> {
  const [command, argv] =
    options.fdLimit === undefined
      ? [process.execPath, args]
      : ['sh', ['-c', `ulimit -n ${options.fdLimit} && exec "$0" "$@"`, process.execPath, ...args]];
  const child = spawn(command, argv, {
    cwd: ROOT,
    env: { ...process.env, CODEMODE_EXECUTOR_TOKEN: '', ...options.env },
  });
  running.add(child);
  const lines: string[] = [];
  const raw: string[] = [];
  const stderr: string[] = [];
  const waiters: { pattern: RegExp; resolve(line: string): void }[] = [];
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const printed = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      raw.push(printed);
      const line = messageOf(printed);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (!waiter.pattern.test(line)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  return {
    child,
    lines,
    raw,
    stderr,
    exited,
    waitForLine(pattern) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then(() =>
          reject(new Error(`daemon exited before printing ${pattern}; stderr: ${stderr.join('')}`)),
        );
      });
    },
    kill(signal) {
      child.kill(signal);
    },
  };
}

/** A line in neither log format is kept whole, for a test to catch. */
function messageOf(line: string): string {
  return messageOfLogLine(line) ?? line;
}

/** Spawns the daemon and waits for `listening on <url>`. */
export async function startDaemon(args: string[] = [], options: SpawnOptions = {}): Promise<Daemon> {
  return listening(spawnDaemon(['--port', '0', ...args], options));
}

/** A daemon with its admin listener on a free port. */
export interface AdminDaemon extends Daemon {
  /** `http://127.0.0.1:<port>` */
  readonly adminUrl: string;
  readonly adminPort: number;
}

export async function startAdminDaemon(args: string[] = [], options: SpawnOptions = {}): Promise<AdminDaemon> {
  const daemon = await startDaemon(['--admin-port', '0', ...args], options);
  const line = await daemon.waitForLine(/^admin listening on /);
  const adminUrl = /^admin listening on (\S+)/.exec(line)![1]!;
  return { ...daemon, adminUrl, adminPort: Number(new URL(adminUrl).port) };
}

/** GET on the admin listener: the status and the body. */
export async function adminGet(daemon: AdminDaemon, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${daemon.adminUrl}${path}`);
  return { status: response.status, body: await response.text() };
}

/** The value of one sample of the daemon's /metrics (0 when absent), e.g. `codemode_executor_sessions`. */
export async function metricValue(daemon: AdminDaemon, sample: string): Promise<number> {
  const { body } = await adminGet(daemon, '/metrics');
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

/** The real daemon, announcing protocol version 2, on `port` (0: a free one). */
export async function startMismatchDaemon(port = 0): Promise<Daemon> {
  return listening(spawnNode([...MISMATCH, String(port)], {}));
}

async function listening(daemon: Omit<Daemon, 'url' | 'port'>): Promise<Daemon> {
  const line = await daemon.waitForLine(/^listening on /);
  const url = line.slice('listening on '.length);
  return { ...daemon, url, port: Number(new URL(url).port) };
}

/** Stops every daemon still running: resumes a frozen one, then kills it. */
export async function stopAllDaemons(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => {});
    }),
  );
}

/** Polls until `check` holds; the test's own timeout bounds the wait. */
export async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}
