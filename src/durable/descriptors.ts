/**
 * Running out of file descriptors, told apart from a broken state: EMFILE (this process's limit)
 * and ENFILE (the system's file table) fail an open of a healthy file, and an operator who reads
 * "unable to open database file" would look for damage that is not there.
 */
import { readFileSync } from 'node:fs';
import { type DurableStateError, durableStateError, errnoCode } from './errors.js';
import type { FileFault } from './sqlite-binding.js';
import { formatOutOfDescriptors } from './texts.js';

const DESCRIPTOR_CODES = new Set(['EMFILE', 'ENFILE']);

/** This process's limit on open files, as `ulimit -n` shows it, from /proc (Linux); undefined elsewhere. */
interface DescriptorLimit {
  soft: string;
  hard: string;
}

/**
 * Read once as this module loads, and again at each refusal: reading needs a descriptor itself,
 * which a refusal for want of one may not have (and Node raises its soft limit as it starts).
 */
let lastRead: DescriptorLimit | undefined;

function readDescriptorLimit(): DescriptorLimit | undefined {
  lastRead = readLimitsFile() ?? lastRead;
  return lastRead;
}

readDescriptorLimit();

function readLimitsFile(): DescriptorLimit | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((row) => row.startsWith('Max open files'));
    const [soft, hard] = line?.slice('Max open files'.length).trim().split(/\s+/) ?? [];
    return soft && hard ? { soft, hard } : undefined;
  } catch {
    return undefined;
  }
}

/** The refusal for `error` if it is EMFILE or ENFILE, naming `file` (what could not be opened). */
export function outOfDescriptors(error: unknown, file: string): DurableStateError | undefined {
  const code = errnoCode(error);
  if (code === undefined || !DESCRIPTOR_CODES.has(code)) return undefined;
  return durableStateError('STATE_OUT_OF_DESCRIPTORS', formatOutOfDescriptors(file, code, readDescriptorLimit()));
}

/** The same for the SQLite binding's last failed file call, which its own error does not name. */
export function faultOutOfDescriptors(fault: FileFault | undefined, file: string): DurableStateError | undefined {
  return fault ? outOfDescriptors(fault, fault.path ?? file) : undefined;
}
