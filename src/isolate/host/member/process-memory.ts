/**
 * The proportional set size (PSS) of a process: its private pages plus its share of the pages it
 * shares with others (the workerd binary, mostly), which is what it costs the machine. Linux reports
 * it in /proc/<pid>/smaps_rollup; reading that walks the process's page tables (about 0.6 to 0.9 ms
 * for a pool member, measured), so it is read only when asked for.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { kernelPageKb } from './proc-readers.js';

/** PSS in MB, or undefined where the platform does not report it or the process is gone. */
export function pssMb(pid: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A process's resident memory, split as the pool's budget counts it. */
export interface MemberMemory {
  /** Its own pages (anonymous): what it alone costs. */
  privateMb: number;
  /** Its file and shared-memory pages (the workerd binary's, mostly), which every member maps and the machine holds once. */
  sharedMb: number;
}

/** The base page size in kB, which /proc/<pid>/statm counts in (read once). */
let pageKb: number | undefined;
function basePageKb(): number {
  pageKb ??= kernelPageKb({ closeSync, openSync, readFileSync, readSync });
  return pageKb;
}

interface MemoryReader {
  fd: number | undefined;
  readonly buffer: Buffer;
}

/** One reader a process, its /proc/<pid>/statm opened once: a read is then a syscall (about 1.4 µs), not an open. */
const readers = new WeakMap<object, MemoryReader>();

/**
 * What a process holds, from /proc/<pid>/statm: resident pages, of which shared (file-backed and
 * shared memory). Undefined off Linux, or once the process is gone. The descriptor names that
 * process, not a later one that reuses its pid, and is closed once the process has ended.
 */
export function memberMemory(member: { pid: number; ended: Promise<unknown> }): MemberMemory | undefined {
  if (process.platform !== 'linux') return undefined;
  let reader = readers.get(member);
  if (reader === undefined) {
    let fd: number | undefined;
    try {
      fd = openSync(`/proc/${member.pid}/statm`, 'r');
    } catch {
      return undefined;
    }
    const opened: MemoryReader = { fd, buffer: Buffer.alloc(128) };
    reader = opened;
    readers.set(member, opened);
    void member.ended.then(() => closeReader(opened));
  }
  if (reader.fd === undefined) return undefined;
  let text: string;
  try {
    text = reader.buffer.toString('latin1', 0, readSync(reader.fd, reader.buffer, 0, reader.buffer.length, 0));
  } catch {
    closeReader(reader);
    return undefined;
  }
  const [, resident, shared] = text.split(' ').map(Number);
  if (!Number.isFinite(resident) || !Number.isFinite(shared)) return undefined;
  const kb = basePageKb();
  return { privateMb: ((resident! - shared!) * kb) / 1024, sharedMb: (shared! * kb) / 1024 };
}

function closeReader(reader: MemoryReader): void {
  if (reader.fd === undefined) return;
  try {
    closeSync(reader.fd);
  } catch {
    // Already closed.
  }
  reader.fd = undefined;
}
