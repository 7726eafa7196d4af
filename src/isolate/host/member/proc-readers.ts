/**
 * /proc readings that the memory guard's thread runs too (memory-guard-thread.ts). Each is
 * self-contained, taking the `node:fs` functions it needs as an argument, so the thread evaluates
 * the same text the main thread calls (see protocol/function-source.ts). Linux only.
 */
import type { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/** The `node:fs` functions these readers use. */
export interface ProcFs {
  openSync: typeof openSync;
  readSync: typeof readSync;
  closeSync: typeof closeSync;
  readFileSync: typeof readFileSync;
}

/**
 * Field 22 of /proc/<pid>/stat: when the process started, which a later process that reuses its
 * pid does not share. Undefined once the process is gone.
 */
export function processStartTime(fs: ProcFs, pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The base page size in kB, which /proc/<pid>/statm counts in: the first mapping's KernelPageSize. */
export function kernelPageKb(fs: ProcFs): number {
  try {
    const fd = fs.openSync('/proc/self/smaps', 'r');
    try {
      const head = Buffer.alloc(4096);
      const read = fs.readSync(fd, head, 0, head.length, 0);
      const match = /KernelPageSize:\s+(\d+) kB/.exec(head.toString('latin1', 0, read));
      if (match) return Number(match[1]);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Below: the base page on every platform workerd ships for but some arm64 kernels.
  }
  return 4;
}
