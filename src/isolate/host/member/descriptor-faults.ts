/**
 * Whether an error is a host out of file descriptors: EMFILE (this process's limit, `ulimit -n`)
 * or ENFILE (the system's table). Node reports them as an error's `code`, on the error itself or
 * on one it wraps (`cause`), and a few paths only in the message (`EMFILE: too many open files`).
 */
import { openFilesLimit } from '../options/host-sizing.js';

export type DescriptorFault = 'EMFILE' | 'ENFILE';

/** How deep `cause` is followed: an error wrapped by the launcher, then by the run. */
const CAUSE_DEPTH = 4;

export function descriptorFaultOf(error: unknown): DescriptorFault | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH && typeof current === 'object' && current !== null; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === 'EMFILE' || code === 'ENFILE') return code;
    if (typeof message === 'string') {
      const named = /\b(EMFILE|ENFILE)\b/.exec(message);
      if (named !== null) return named[1] as DescriptorFault;
    }
    current = cause;
  }
  return undefined;
}

let knownLimit: number | undefined;

/**
 * The process's open-file limit: read again each time, and the last figure read kept for when
 * reading it fails, as it does once no descriptor is left to open /proc/self/limits with.
 */
export function descriptorLimit(): number | undefined {
  knownLimit = openFilesLimit() ?? knownLimit;
  return knownLimit;
}
