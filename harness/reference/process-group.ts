/**
 * Process groups that must not outlive us. wrangler spawns workerd (and esbuild), so a child is
 * started as the leader of its own group and the whole group is signalled. Node-only, POSIX.
 */
import { readdirSync, readFileSync } from 'node:fs';

const live = new Set<number>();
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

/** Tracks a group so that our exit (normal, or by SIGINT/SIGTERM/SIGHUP) kills it. */
export function trackGroup(pgid: number): void {
  installHooks();
  live.add(pgid);
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
  signalGroup(pgid, 'SIGTERM');
  if (!(await waitUntilEmpty(pgid, graceMs))) {
    signalGroup(pgid, 'SIGKILL');
    if (!(await waitUntilEmpty(pgid, graceMs))) throw new Error(`Process group ${pgid} still runs after SIGKILL`);
  }
  live.delete(pgid);
}
