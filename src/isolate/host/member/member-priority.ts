/**
 * Pool members run below the host: MEMBER_NICE_STEP nice values below it, so that when the cores are contended
 * the host's own work (answering every member's tool calls and relaying its fetches) comes first,
 * and spinning members slow the programs that wait on tools as little as possible. Measured on 2
 * cores, with 100 waiting programs beside 4 spins, their p95 grew by 15–32% with members at the
 * host's priority, and by 0–18% below it. Only when the cores are contended does it matter: an
 * idle core runs a member at any nice value.
 *
 * Linux keeps a nice value per thread, and a thread inherits its creator's, so every thread the
 * member has at the start is lowered. Where the kernel groups processes by session for scheduling
 * (autogroup, `/proc/sys/kernel/sched_autogroup_enabled`), and each member leads a session of its
 * own, the session's group weight is what counts, so the group's nice is lowered too
 * (`/proc/<pid>/autogroup`). Every step is best effort: a host that may not do one runs its
 * members at the default priority, as before.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

const MEMBER_NICE_STEP = 10;
const LOWEST_NICE = 19;

/** A nice value MEMBER_NICE_STEP below `nice`, as far as the scale goes. */
export function belowHost(nice: number): number {
  return Math.min(LOWEST_NICE, nice + MEMBER_NICE_STEP);
}

/** The kernel takes one autogroup change per 100 ms from an unprivileged host; later ones are retried. */
const AUTOGROUP_RETRY_MS = 120;
const AUTOGROUP_ATTEMPTS = 10;

function autogroupEnabled(): boolean {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
  } catch {
    return false;
  }
}

const AUTOGROUP = process.platform === 'linux' && autogroupEnabled();

/** The nice value of the host's own autogroup (0 unless someone changed it). */
function hostAutogroupNice(): number {
  try {
    return Number(/nice (-?\d+)/.exec(readFileSync('/proc/self/autogroup', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function threadsOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [pid];
  }
}

function lowerAutogroup(pid: number, alive: () => boolean, attempt: number): void {
  // A retry never reaches a process that took over the pid of a member that ended meanwhile.
  if (!alive()) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(belowHost(hostAutogroupNice())));
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EAGAIN' || attempt >= AUTOGROUP_ATTEMPTS) return;
    setTimeout(() => lowerAutogroup(pid, alive, attempt + 1), AUTOGROUP_RETRY_MS).unref();
  }
}

/** Lowers a member's priority below the host's, as far as this host allows; `alive` says it is still the member. */
export function lowerMemberPriority(pid: number, alive: () => boolean): void {
  const nice = belowHost(getPriority());
  const threads = process.platform === 'linux' ? threadsOf(pid) : [pid];
  for (const thread of threads) {
    try {
      setPriority(thread, nice);
    } catch {
      // Not permitted here: the member keeps the default priority.
    }
  }
  if (AUTOGROUP) lowerAutogroup(pid, alive, 1);
}
