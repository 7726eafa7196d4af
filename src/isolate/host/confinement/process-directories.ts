/**
 * Temporary directories named after the process that made them, so that one a SIGKILLed process
 * left behind (no exit hook ran) is recognised and removed by the next process that makes one
 * under the same prefix.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Makes `<base>/<prefix><pid>-XXXXXX`, first removing this uid's directories of that prefix whose process is gone. */
export function makeProcessDirectory(base: string, prefix: string): string {
  removeOrphans(base, prefix);
  return mkdtempSync(join(base, `${prefix}${process.pid}-`));
}

function removeOrphans(base: string, prefix: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)-/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || existsSync(`/proc/${pid}`)) continue;
    const path = join(base, name);
    try {
      if (statSync(path).uid === process.getuid?.()) rmSync(path, { recursive: true, force: true });
    } catch {
      // Another process removed it meanwhile.
    }
  }
}
