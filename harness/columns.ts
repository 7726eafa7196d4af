/**
 * Every column a case runs on, in report order: ours in-process, ours over a daemon, then the
 * reference releases oldest to newest. A reference column's release decides which side of each
 * boundary it is on; ours follows no release, so no boundary skips it. Node-only.
 */
import { readFileSync } from 'node:fs';
import { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from '../src/isolate/index.js';
import { messageOf } from '../src/protocol/index.js';
import { COLUMN_NAMES, columnByName, installedVersion, readColumnVersions } from './reference/columns.js';
import type { ColumnVersions, MatrixColumn } from './report/model.js';

const OUR_COLUMNS = ['ours', 'ours-remote'] as const;
export const COLUMN_IDS = [...OUR_COLUMNS, ...COLUMN_NAMES] as const;
export type ColumnId = (typeof COLUMN_IDS)[number];

/** What the plan needs of a column: its id, its kind, and (reference columns) the release it runs. */
export interface PlannedColumn {
  id: ColumnId;
  kind: MatrixColumn['kind'];
  /** The `@cloudflare/codemode` release; undefined for ours, or when it cannot be read. */
  release?: string;
}

export function isColumnId(id: string): id is ColumnId {
  return (COLUMN_IDS as readonly string[]).includes(id);
}

/** The column with its release as installed; an unreadable release leaves it undefined (the column will fail to open). */
export function plannedColumn(id: ColumnId): PlannedColumn {
  if (id === 'ours' || id === 'ours-remote') return { id, kind: id };
  try {
    return { id, kind: 'reference', release: readColumnVersions(columnByName(id)).codemode };
  } catch {
    return { id, kind: 'reference' };
  }
}

const NO_VERSIONS: ColumnVersions = {
  codemode: null,
  executor: null,
  workerd: null,
  wrangler: null,
  compatibilityDate: null,
  compatibilityFlags: [],
};

function ourPackageVersion(): string {
  const manifest = new URL('../package.json', import.meta.url);
  return String((JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version);
}

/**
 * The column as the report describes it: label and versions, read from what is installed without
 * starting anything. A column whose versions cannot be read carries why, as its infra-error.
 */
export function describeColumn(id: ColumnId): MatrixColumn {
  if (id === 'ours' || id === 'ours-remote') {
    return {
      id,
      label: id,
      kind: id,
      versions: {
        ...NO_VERSIONS,
        executor: ourPackageVersion(),
        workerd: installedVersion('workerd'),
        compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
        compatibilityFlags: [...SANDBOX_COMPATIBILITY_FLAGS],
      },
    };
  }
  try {
    const versions = readColumnVersions(columnByName(id));
    return {
      id,
      label: id === versions.codemode ? id : `${id} (${versions.codemode})`,
      kind: 'reference',
      versions: {
        codemode: versions.codemode,
        executor: null,
        workerd: versions.workerd,
        wrangler: versions.wrangler,
        compatibilityDate: versions.sandboxCompatibilityDate,
        compatibilityFlags: [...versions.sandboxCompatibilityFlags],
        hostCompatibilityDate: versions.hostCompatibilityDate,
        hostCompatibilityFlags: [...versions.hostCompatibilityFlags],
      },
    };
  } catch (error) {
    return { id, label: id, kind: 'reference', versions: { ...NO_VERSIONS }, infraError: messageOf(error) };
  }
}
