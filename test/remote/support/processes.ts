/** The daemon's sandbox processes, seen from outside (Linux /proc). */
import { readdirSync, readFileSync } from 'node:fs';
import { isAlive } from '../../isolate/processes.js';

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
