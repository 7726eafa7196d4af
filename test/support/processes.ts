/** Test helpers about OS processes. */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether a process exists and is not a zombie. A killed workerd whose wrapper died with it is
 * reparented and may linger as a zombie until init reaps it; that is not a process that outlived
 * anything.
 */
export function isAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The state follows the parenthesized command name, which may itself contain spaces.
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until the condition holds; fails after a generous deadline (this is not a speed check). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 20_000,
): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 25) {
    if (waited > deadlineMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** CPU time a process has used, in ms (Linux: utime + stime from /proc, in 10 ms ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The turn grace (IsolateExecutor's `turnGraceMs`) for executors whose tests spin past a wall-clock
 * bound but are not about the grace: its least, so each such spin is killed about 3 s of CPU sooner
 * than at the default. The grace itself is pinned by the catalogue's cases at the default.
 */
export const SPIN_TURN_GRACE_MS = 200;

/** Resolves once the process has burned `ms` more CPU time: it is certainly spinning. */
export async function waitForSpin(pid: number, ms = 100): Promise<void> {
  if (process.platform !== 'linux') return;
  const start = cpuMs(pid);
  await waitFor(() => cpuMs(pid) - start >= ms, `process ${pid} to spin`);
}

/** The workerd processes descended from `ancestor`: the sandbox processes of a daemon. */
export function workerdDescendants(ancestor: number): number[] {
  const parents = new Map<number, { ppid: number; name: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      parents.set(Number(entry), { ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), name });
    } catch {
      // Gone meanwhile.
    }
  }
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid)?.ppid; at !== undefined && at > 1; at = parents.get(at)?.ppid)
      if (at === ancestor) return true;
    return false;
  };
  return [...parents]
    .filter(([pid, { name }]) => name === 'workerd' && isAlive(pid) && descends(pid))
    .map(([pid]) => pid);
}
