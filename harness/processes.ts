/**
 * The processes the harness starts (`wrangler dev`, the executor daemon), none of which may outlive
 * it. Each leads a process group of its own, so whatever it spawns (workerd, esbuild) goes down
 * with it; every live group is killed when we exit, when we die of SIGINT, SIGTERM or SIGHUP, and,
 * through a watcher, when we are SIGKILLed. `startService` spawns one and waits for the line that
 * says it is ready. Node-only, POSIX.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOKEN_ENV } from '../src/server/index.js';
import { texts } from './texts.js';

const live = new Set<number>();
const watchers = new Map<number, ChildProcess>();
let hooksInstalled = false;

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty.
  }
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // Gone while we looked.
  }
}

/**
 * Members of the group that are still running, from /proc. Zombies do not count: whoever reaps
 * them is not us, and they hold no port. Without /proc, one placeholder stands for "the group exists".
 */
export function groupMembers(pgid: number): { pid: number; command: string }[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return signalGroup(pgid, 0) ? [{ pid: pgid, command: '(unknown: no /proc)' }] : [];
  }
  const members: { pid: number; command: string }[] = [];
  for (const pid of entries) {
    const stat = readOrEmpty(`/proc/${pid}/stat`);
    if (stat === '') continue;
    // Fields after the parenthesised command name: state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) !== pgid || state === 'Z') continue;
    members.push({ pid: Number(pid), command: readOrEmpty(`/proc/${pid}/cmdline`).split('\0').join(' ').trim() });
  }
  return members;
}

function killAllNow(): void {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
  live.clear();
  for (const watcher of watchers.values()) watcher.kill('SIGKILL');
  watchers.clear();
}

/** On a signal we kill our groups; if nobody else listens, we then die of the signal as we would have. */
function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  if (process.listenerCount(signal) === 1) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
}

function trackGroup(pgid: number): void {
  if (!hooksInstalled) {
    hooksInstalled = true;
    process.on('exit', killAllNow);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  }
  live.add(pgid);
  // No hook runs in a process killed by SIGKILL. This watcher, in a group of its own, blocks
  // reading a pipe whose only writer is us; when the kernel closes it with us, it ends the group.
  const script = `while read -r _; do :; done; kill -TERM -${pgid} 2>/dev/null; sleep 5; kill -KILL -${pgid} 2>/dev/null`;
  const watcher = spawn('sh', ['-c', script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watcher.unref();
  (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  watchers.set(pgid, watcher);
}

async function waitUntilEmpty(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** SIGTERM the group, SIGKILL what is left after `graceMs`, and resolve once nothing in it runs. */
async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  // The watcher goes first, so it never signals a group id that may have been reused.
  watchers.get(pgid)?.kill('SIGKILL');
  watchers.delete(pgid);
  signalGroup(pgid, 'SIGTERM');
  if (!(await waitUntilEmpty(pgid, graceMs))) {
    signalGroup(pgid, 'SIGKILL');
    if (!(await waitUntilEmpty(pgid, graceMs))) throw new Error(texts.service.outlivedKill(pgid));
  }
  live.delete(pgid);
}

export interface ServiceOptions {
  /** Names the process in every error: `wrangler dev for reference column 0.4.1`. */
  label: string;
  command: string;
  args: readonly string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The line that says it is ready, anywhere in the output; its first group is the address. */
  ready: RegExp;
  /** How `ready` reads in an error: `Ready on http://...`. */
  readyLine: string;
  readyTimeoutMs: number;
  /** Output after which this start cannot succeed: it rejects with a `ServiceRefused`. */
  refusal?: RegExp;
  /** How long a SIGTERM may take before the group is killed. */
  stopGraceMs: number;
}

export interface Service {
  url: string;
  /** The process group it leads. */
  processGroup: number;
  /** What it printed, ANSI stripped, the latest 256 KiB. */
  output(): string;
  /** Why it is no longer running, or undefined while it runs or once stopped on purpose. */
  gone(): string | undefined;
  /** Stops the whole group. Idempotent. */
  stop(): Promise<void>;
}

/** The start met the `refusal` output (a port taken, for instance); another attempt may succeed. */
export class ServiceRefused extends Error {}

const OUTPUT_LIMIT = 256 * 1024;
/** How much of the output an error message quotes. */
const QUOTED_OUTPUT = 8 * 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC opens every ANSI sequence this strips.
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Spawns the service in a group of its own; resolves once it prints its ready line, else stops it and rejects with its output. */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { label, readyTimeoutMs } = options;
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const quoted = () => output.slice(-QUOTED_OUTPUT);
  let exit: string | undefined;
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve((exit = texts.service.status(code, signal)))),
  );
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined)).once('error', resolve);
  });
  if (spawned !== undefined || child.pid === undefined)
    throw new Error(texts.service.exitedEarly(label, texts.service.spawnFailed(spawned?.message), ''));
  const group = child.pid;
  trackGroup(group);
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopGroup(group, options.stopGraceMs));

  // Both streams are read to the end, so a pipe never fills and stalls the service.
  const ready = new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8').replace(ANSI, '')).slice(-OUTPUT_LIMIT);
      if (options.refusal?.test(output)) reject(new ServiceRefused(quoted()));
      const line = options.ready.exec(output);
      if (line) resolve(line[1]!);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((status) => reject(new Error(texts.service.exitedEarly(label, status, quoted()))));
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(texts.service.notReady(label, options.readyLine, readyTimeoutMs, quoted()))),
      readyTimeoutMs,
    );
  });
  try {
    return {
      url: await Promise.race([ready, late]),
      processGroup: group,
      output: () => output,
      gone: () => (exit === undefined || stopping ? undefined : texts.service.exitedLater(label, exit, quoted())),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The executor daemon, `codemode-executor serve` from `src/` under tsx on a free loopback port. It
 * runs from the sources, not from `dist/`, so it tests the same code as the in-process side and a
 * stale build cannot pass for a fresh one. Besides its group, it stops itself when we are gone
 * (the daemon watches its parent). The ours-remote side and the benchmark start it here.
 */
export function startDaemonProcess({
  label,
  args,
  env = {},
}: {
  label: string;
  args: readonly string[];
  /** Added to the daemon's environment (`CODEMODE_WORKERD_BINARY` names its workerd). */
  env?: Record<string, string>;
}): Promise<Service> {
  const command = ['src/server/cli.ts', 'serve', '--port', '0', ...args];
  return startService({
    label: texts.service.daemonLabel(label, command),
    command: process.execPath,
    args: ['--import', 'tsx', ...command],
    cwd: join(import.meta.dirname, '..'),
    // An ambient token would make the daemon refuse us; on loopback none is needed.
    env: { ...process.env, ...env, [TOKEN_ENV]: '' },
    ready: /listening on (wss?:\/\/[^\s"]+)/,
    readyLine: 'listening on <url>',
    // tsx compiles the sources first, on a busy machine.
    readyTimeoutMs: 60_000,
    // A graceful stop drains running executions and disposes the pool.
    stopGraceMs: 15_000,
  });
}
