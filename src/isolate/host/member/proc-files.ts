/**
 * A member's /proc files, read through descriptors opened once per process (Linux): each reading
 * is one `pread`, where opening the file afresh costs four system calls, and a descriptor names
 * its process, not a later one that reuses the pid (it reads as an error once the process is
 * gone). The CPU time is parsed from the bytes, without building strings: the run clock reads it
 * at every tool call.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Clock ticks are 10 ms: USER_HZ is 100 on every Linux the workerd binaries target. */
const MS_PER_TICK = 10;
/** /proc/<pid>/stat up to its 15th field is far shorter (the name is at most 16 bytes). */
const statBuffer = Buffer.allocUnsafe(1024);
/** VmRSS comes about a kilobyte into /proc/<pid>/status. */
const statusBuffer = Buffer.allocUnsafe(4096);
const SPACE = 0x20;
const CLOSING_PARENTHESIS = 0x29;
const DIGIT_0 = 0x30;

function openOrUndefined(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}

function readOrZero(fd: number | undefined, buffer: Buffer): number {
  if (fd === undefined) return 0;
  try {
    return readSync(fd, buffer, 0, buffer.length, 0);
  } catch {
    return 0;
  }
}

/** utime + stime (fields 14 and 15) of a /proc/<pid>/stat text, in ticks; undefined if malformed. */
export function statCpuTicks(bytes: Buffer, length: number): number | undefined {
  // The name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
  let at = bytes.lastIndexOf(CLOSING_PARENTHESIS, length - 1);
  if (at < 0) return undefined;
  // Past ") ", at field 3; skip to field 14.
  at += 2;
  for (let field = 3; field < 14; field++) {
    at = bytes.indexOf(SPACE, at);
    if (at < 0 || at >= length) return undefined;
    at += 1;
  }
  let ticks = 0;
  for (let field = 14; field <= 15; field++) {
    let digits = 0;
    let value = 0;
    for (; at < length; at++) {
      const digit = bytes[at]! - DIGIT_0;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
      digits += 1;
    }
    if (digits === 0 || (at < length && bytes[at] !== SPACE)) return undefined;
    ticks += value;
    at += 1;
  }
  return ticks;
}

export class ProcFiles {
  #stat: number | undefined;
  #status: number | undefined;

  constructor(pid: number) {
    this.#stat = openOrUndefined(`/proc/${pid}/stat`);
    this.#status = openOrUndefined(`/proc/${pid}/status`);
  }

  /** The CPU time the process has used, in ms; undefined once it is gone or unreadable. */
  cpuMs(): number | undefined {
    const length = readOrZero(this.#stat, statBuffer);
    if (length === 0) return undefined;
    const ticks = statCpuTicks(statBuffer, length);
    return ticks === undefined ? undefined : ticks * MS_PER_TICK;
  }

  /** Its resident set in MB (VmRSS); undefined once it is gone or unreadable. */
  rssMb(): number | undefined {
    const length = readOrZero(this.#status, statusBuffer);
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(statusBuffer.toString('latin1', 0, length));
    return match ? Number(match[1]) / 1024 : undefined;
  }

  close(): void {
    for (const fd of [this.#stat, this.#status]) {
      if (fd === undefined) continue;
      try {
        closeSync(fd);
      } catch {}
    }
    this.#stat = undefined;
    this.#status = undefined;
  }
}
