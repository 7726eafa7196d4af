/**
 * Process groups that must not outlive us. wrangler spawns workerd (and esbuild), so a child is
 * started as the leader of its own group and the whole group is signalled. Node-only, POSIX.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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

export interface GroupMember {
  pid: number;
  command: string;
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
export function groupMembers(pgid: number): GroupMember[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return signalGroup(pgid, 0) ? [{ pid: pgid, command: '(unknown: no /proc)' }] : [];
  }
  const members: GroupMember[] = [];
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

function runningMembers(pgid: number): number {
  return groupMembers(pgid).length;
}

function killAllNow(): void {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
  live.clear();
  for (const watcher of watchers.values()) watcher.kill('SIGKILL');
  watchers.clear();
}

/**
 * Nothing runs in a process killed by SIGKILL, so the exit hooks cannot cover it. This watcher,
 * in a group of its own, blocks reading a pipe whose only writer is us; when the kernel closes it
 * with us, it ends the group it guards.
 */
function watchGroup(pgid: number): void {
  const script = `while read -r _; do :; done; kill -TERM -${pgid} 2>/dev/null; sleep 5; kill -KILL -${pgid} 2>/dev/null`;
  const watcher = spawn('sh', ['-c', script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watcher.unref();
  (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  watchers.set(pgid, watcher);
}

/** Stops the watcher first, so it never signals a group id that may have been reused. */
function unwatchGroup(pgid: number): void {
  watchers.get(pgid)?.kill('SIGKILL');
  watchers.delete(pgid);
}

/** On a signal we kill our groups; if nobody else listens, we then die of the signal as we would have. */
function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  if (process.listenerCount(signal) === 1) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
}

/** Tracks a group so that our exit (normal, by SIGINT/SIGTERM/SIGHUP, or by SIGKILL) kills it. */
export function trackGroup(pgid: number): void {
  installHooks();
  live.add(pgid);
  watchGroup(pgid);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntilEmpty(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (runningMembers(pgid) === 0) return true;
    await sleep(50);
  }
  return runningMembers(pgid) === 0;
}

/** SIGTERM the group, SIGKILL what is left after `graceMs`, and resolve once nothing in it runs. */
export async function stopGroup(pgid: number, graceMs = 5_000): Promise<void> {
  unwatchGroup(pgid);
  signalGroup(pgid, 'SIGTERM');
  if (!(await waitUntilEmpty(pgid, graceMs))) {
    signalGroup(pgid, 'SIGKILL');
    if (!(await waitUntilEmpty(pgid, graceMs))) throw new Error(`Process group ${pgid} still runs after SIGKILL`);
  }
  live.delete(pgid);
}
