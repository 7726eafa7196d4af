/**
 * CPU time of this process and of every process under it, from /proc (Linux only): the host's
 * own share from `process.cpuUsage()`, and the pool's workerd members (with their confinement
 * chain) as the CPU of the live descendants plus what reaped descendants left in `cutime`/`cstime`.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime/stime: 100 on every Linux this project runs on. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  /** utime + stime, and cutime + cstime (reaped children), in ms. */
  ownMs: number;
  reapedMs: number;
}

function readStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // Ended between the listing and the read.
  }
  // The command name sits in parentheses and may hold spaces: fields are counted after its `)`.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const tickMs = (index: number) => (Number(fields[index]) * 1000) / TICKS_PER_SECOND;
  return { ppid: Number(fields[1]), ownMs: tickMs(11) + tickMs(12), reapedMs: tickMs(13) + tickMs(14) };
}

/** Every live process under `root`, with its stat. */
function descendants(root: number): ProcStat[] {
  const byParent = new Map<number, { pid: number; stat: ProcStat }[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    const siblings = byParent.get(stat.ppid) ?? [];
    siblings.push({ pid, stat });
    byParent.set(stat.ppid, siblings);
  }
  const found: ProcStat[] = [];
  const pending = [root];
  while (pending.length > 0) {
    for (const child of byParent.get(pending.pop()!) ?? []) {
      found.push(child.stat);
      pending.push(child.pid);
    }
  }
  return found;
}

export interface CpuReading {
  /** This process (the host), user + system, in ms. */
  hostMs: number;
  /** Every process under it, live or reaped, in ms. */
  childrenMs: number;
}

function childrenMs(): number {
  const self = readStat('self');
  return (self?.reapedMs ?? 0) + descendants(process.pid).reduce((sum, stat) => sum + stat.ownMs + stat.reapedMs, 0);
}

const hostMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** The host's clock is read last at the start and first at the end: the /proc scan stays outside it. */
export function readCpu(): CpuReading {
  const children = childrenMs();
  return { hostMs: hostMs(), childrenMs: children };
}

export function cpuSince(start: CpuReading): CpuReading {
  const host = hostMs() - start.hostMs;
  return { hostMs: host, childrenMs: childrenMs() - start.childrenMs };
}
