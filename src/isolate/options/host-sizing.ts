/**
 * The default of `pool.maxWorkers` and `pool.maxStarting`, which depend on the host: its memory,
 * its cores, its open-file limit.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { DEFAULT_POOL } from './table.js';

/**
 * What one member costs the host's memory while it serves programs, for sizing: measured, a fresh
 * member is about 10 MB of proportional set (PSS) beside the binary's pages all members share, and
 * one that has served `recycleAfterRuns` (200) runs about 40 MB (docs/isolate.md).
 */
const MEMBER_MEMORY_MB = 64;
/** File descriptors the host holds per member (measured: 6), with room to spare. */
const HOST_FDS_PER_MEMBER = 8;
/** File descriptors left to the host's own sockets and files when sizing by them. */
const HOST_FDS_RESERVED = 256;

/** The host's memory in MB: the machine's, or less where the process is constrained (a cgroup). */
function hostMemoryMb(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return (constrained > 0 && constrained < total ? constrained : total) / 2 ** 20;
}

/** The soft limit of open files, where Linux reports it (Node raises it to the hard limit at start). */
function openFilesLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** What the default of `pool.maxWorkers` is computed from. */
export interface HostCapacity {
  memoryMb: number;
  cores: number;
  /** The open-file limit, where known. */
  openFiles: number | undefined;
}

/**
 * The rule behind the default of `pool.maxWorkers`: half of the host's memory for the pool, of
 * which room for one member per core at `memoryLimitMb` (only a running member can grow, and at
 * most one per core runs at any moment), and the rest at MEMBER_MEMORY_MB per member. At least
 * 1, and no more than the host's open-file limit can serve. 176 on a 24 GiB, 2-core host with
 * the default cap of 512 MB.
 */
export function maxWorkersFor(host: HostCapacity, memoryLimitMb: number): number {
  const budgetMb = host.memoryMb / 2 - host.cores * memoryLimitMb;
  const byMemory = Math.floor(budgetMb / MEMBER_MEMORY_MB);
  const byFiles =
    host.openFiles === undefined ? byMemory : Math.floor((host.openFiles - HOST_FDS_RESERVED) / HOST_FDS_PER_MEMBER);
  return Math.max(1, Math.min(byMemory, byFiles));
}

/** The default of `pool.maxWorkers` on this host (`maxWorkersFor`). */
export function defaultMaxWorkers(memoryLimitMb: number = DEFAULT_POOL.memoryLimitMb): number {
  return maxWorkersFor(
    { memoryMb: hostMemoryMb(), cores: availableParallelism(), openFiles: openFilesLimit() },
    memoryLimitMb,
  );
}

/**
 * The default of `pool.maxStarting`: two spawns per core (part of a spawn waits on the kernel),
 * from 2 to 8 at once. Measured on 2 cores, a cold burst of 100 programs finished sooner with 4
 * than with 1, 2 or no limit at all (the last made every program wait for all the spawns).
 */
export function defaultMaxStarting(): number {
  return Math.max(2, Math.min(8, 2 * availableParallelism()));
}
