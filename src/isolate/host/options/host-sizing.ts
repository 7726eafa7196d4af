/**
 * The defaults that depend on the host: `pool.memoryBudgetMb` (its memory), `pool.maxWorkers`
 * (that budget and its open-file limit) and `pool.maxStarting` (its cores).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { type CgroupPaths, hostMemoryLimitMb, SYSTEM_CGROUP } from './host-memory.js';

/**
 * The share of the host's memory (its cgroup's limit, else the machine's) the pool's members may
 * use together by default. The rest is the host's own (its process, the values it decodes), and
 * room for members that grow between two readings of their memory.
 */
export const DEFAULT_BUDGET_SHARE = 0.5;
/**
 * The least a member was measured to cost, in MB of private memory (a fresh member: 8.9 MB beside
 * the binary's pages all members share). No budget holds more members than this allows.
 */
export const SMALLEST_MEMBER_MB = 8;
/** File descriptors the host holds per member (measured: 6), with room to spare. */
export const HOST_FDS_PER_MEMBER = 8;
/** File descriptors left to the host's own sockets and files when sizing by them. */
const HOST_FDS_RESERVED = 256;

/** The default of `pool.memoryBudgetMb`: half of the host's memory, in whole MB (docs/isolate.md). */
export function defaultMemoryBudgetMb(paths: CgroupPaths = SYSTEM_CGROUP, machineMb?: number): number {
  return Math.max(1, Math.floor(DEFAULT_BUDGET_SHARE * hostMemoryLimitMb(paths, machineMb)));
}

/** The soft limit of open files, where Linux reports it (Node raises it to the hard limit at start). */
export function openFilesLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** What the default of `pool.maxWorkers` is computed from, besides the memory budget. */
export interface HostCapacity {
  /** The open-file limit, where known. */
  openFiles: number | undefined;
}

/**
 * The rule behind the default of `pool.maxWorkers`, an upper bound only: the pool grows by the
 * members' measured memory against `pool.memoryBudgetMb`, and this is the most members that budget
 * could hold at a member's smallest measured cost, and no more than the host's open-file limit
 * serves. At least 1. 1504 on a host with 23.5 GiB and 20000 open files.
 */
export function maxWorkersFor(host: HostCapacity, memoryBudgetMb: number): number {
  const byMemory = Math.floor(memoryBudgetMb / SMALLEST_MEMBER_MB);
  const byFiles =
    host.openFiles === undefined ? byMemory : Math.floor((host.openFiles - HOST_FDS_RESERVED) / HOST_FDS_PER_MEMBER);
  return Math.max(1, Math.min(byMemory, byFiles));
}

/** The default of `pool.maxWorkers` on this host (`maxWorkersFor`), for this budget. */
export function defaultMaxWorkers(memoryBudgetMb: number = defaultMemoryBudgetMb()): number {
  return maxWorkersFor({ openFiles: openFilesLimit() }, memoryBudgetMb);
}

/**
 * The rule behind the default of `pool.maxStarting`: 16 starts per core, from 4 to 128 at once.
 * Most of a start waits (on the kernel, on workerd loading its config), so many overlap well: on
 * a machine where a start takes 400 ms, 4 at once kept a burst of 100 programs waiting for 25
 * rounds of starts (issue 35: 67 members after three bursts, 26 programs still queued). Where
 * starts are fast, a cold burst of 100 took 1.8 s with 4 at once against 2.1 s with no limit at
 * all: the cap keeps a burst from being all spawns at once, and 16 per core stays well below that.
 */
export const DEFAULT_STARTING = Object.freeze({ perCore: 16, least: 4, most: 128 });

/** The default of `pool.maxStarting` for a host with that many cores (`DEFAULT_STARTING`). */
export function maxStartingFor(cores: number): number {
  const { perCore, least, most } = DEFAULT_STARTING;
  return Math.max(least, Math.min(most, perCore * cores));
}

/** The default of `pool.maxStarting` on this host. */
export function defaultMaxStarting(): number {
  return maxStartingFor(availableParallelism());
}
