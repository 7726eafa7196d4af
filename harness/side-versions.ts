/**
 * What each side runs on, in one line for the catalogue summary: ours names our package and the
 * workerd it drives, a reference column the codemode release, workerd and wrangler it runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../src/protocol/errors.js';
import type { SideName } from './case-model.js';
import { columnByName, installedVersion, readColumnVersions } from './reference/index.js';
import { isReferenceColumn } from './sides/index.js';

const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));

function ourExecutorVersion(): string {
  return String((JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown }).version);
}

/** The side's versions, or why they could not be read (a drifted npm alias, a missing package). */
export function sideVersions(side: SideName): string {
  try {
    if (!isReferenceColumn(side)) return `executor ${ourExecutorVersion()} · workerd ${installedVersion('workerd')}`;
    const versions = readColumnVersions(columnByName(side));
    return `codemode ${versions.codemode} · workerd ${versions.workerd} · wrangler ${versions.wrangler}`;
  } catch (error) {
    return `versions unknown: ${messageOf(error)}`;
  }
}
