/**
 * The host's memory limit, which bounds the pool's memory budget: the cgroup v2 `memory.max` of the
 * host process's own cgroup (or of an ancestor, the smallest one set), else the machine's memory.
 * Members are the host's children, so they count against the same cgroup. The paths are passed
 * in so a test can point them at a fake cgroup; Node's `process.constrainedMemory()` reads the
 * same limit but cannot be pointed anywhere else.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';

const MIB = 2 ** 20;

/** Where the host's cgroup is read from. */
export interface CgroupPaths {
  /** The process's cgroup membership: `/proc/self/cgroup`. */
  membership: string;
  /** Where the cgroup v2 hierarchy is mounted: `/sys/fs/cgroup`. */
  mount: string;
}

export const SYSTEM_CGROUP: CgroupPaths = { membership: '/proc/self/cgroup', mount: '/sys/fs/cgroup' };

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The smallest `memory.max` set on the host's cgroup v2 and its ancestors, in MB; undefined where
 * there is no cgroup v2 membership (the `0::` line), or none of them sets one (`max`).
 */
export function cgroupMemoryLimitMb(paths: CgroupPaths = SYSTEM_CGROUP): number | undefined {
  const line = readText(paths.membership)
    ?.split('\n')
    .find((entry) => entry.startsWith('0::'));
  if (line === undefined) return undefined;
  let limit: number | undefined;
  for (let dir = line.slice(3).trim() || '/'; ; dir = dir.slice(0, dir.lastIndexOf('/')) || '/') {
    const text = readText(join(paths.mount, dir, 'memory.max'))?.trim();
    if (text !== undefined && /^\d+$/.test(text)) limit = Math.min(limit ?? Infinity, Number(text) / MIB);
    if (dir === '/') return limit;
  }
}

/** The host's memory in MB: its cgroup's limit where one is set and below the machine's, else the machine's. */
export function hostMemoryLimitMb(paths: CgroupPaths = SYSTEM_CGROUP, machineMb = totalmem() / MIB): number {
  const cgroup = cgroupMemoryLimitMb(paths);
  return cgroup !== undefined && cgroup < machineMb ? cgroup : machineMb;
}
