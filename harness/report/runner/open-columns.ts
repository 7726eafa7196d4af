/**
 * Opening each column the matrix runs: ours and ours-remote through the catalogue's side registry
 * (harness/sides), each release through harness/reference. A column that fails to start becomes an
 * infra-error with the reason, instead of crashing the run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from '../../../src/isolate/index.js';
import { messageOf } from '../../../src/protocol/errors.js';
import type { Case, Outcome } from '../../case-model.js';
import {
  COLUMN_NAMES,
  columnByName,
  describeRequest,
  installedVersion,
  type ColumnVersions as ReferenceVersions,
  readColumnVersions,
  runOnReference,
  startReferenceColumn,
} from '../../reference/index.js';
import { startSide } from '../../sides/index.js';
import type { ColumnVersions, MatrixColumn } from '../model.js';
import { REPO_ROOT } from '../paths.js';

/** A running column: runs one case to an outcome. Rejects only when the harness broke. */
export interface OpenColumn {
  run(testCase: Case): Promise<Outcome>;
  /** Throws the refusal when the column cannot express the case (checked before anything is sent). */
  refuses?(testCase: Case): string | undefined;
  stop(): Promise<void>;
}

export type Opened = { column: MatrixColumn; open: OpenColumn } | { column: MatrixColumn; reason: string };

const EMPTY_VERSIONS: ColumnVersions = {
  codemode: null,
  executor: null,
  workerd: null,
  wrangler: null,
  compatibilityDate: null,
  compatibilityFlags: [],
};

/** What ours runs on: our package, the workerd it drives, and the compatibility settings of every sandbox (upstream's). */
function ourVersions(): ColumnVersions {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  return {
    ...EMPTY_VERSIONS,
    executor: manifest.version,
    workerd: installedVersion('workerd'),
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    compatibilityFlags: [...SANDBOX_COMPATIBILITY_FLAGS],
  };
}

/** The columns of a run, in report order: ours, ours-remote, then releases oldest to newest. */
export function plannedColumns(): Pick<MatrixColumn, 'id' | 'kind'>[] {
  return [
    { id: 'ours', kind: 'ours' },
    { id: 'ours-remote', kind: 'ours-remote' },
    ...COLUMN_NAMES.map((id) => ({ id, kind: 'reference' as const })),
  ];
}

/** Ours, in-process or remote, through the catalogue's side registry (harness/sides). */
export async function openOurSide(id: 'ours' | 'ours-remote'): Promise<Opened> {
  const column: MatrixColumn = { id, label: id, kind: id, versions: ourVersions() };
  try {
    const side = await startSide(id);
    return { column, open: { run: (testCase) => side.run(testCase), stop: () => side.dispose() } };
  } catch (error) {
    return { column, reason: messageOf(error) };
  }
}

/** One reference column under `wrangler dev`, through harness/reference. */
export async function openReferenceColumn(id: string): Promise<Opened> {
  const column: MatrixColumn = { id, label: id, kind: 'reference', versions: { ...EMPTY_VERSIONS } };
  // Versions first, so a column that fails to start still says what it would have run.
  try {
    describeVersions(column, readColumnVersions(columnByName(id)));
  } catch (error) {
    return { column, reason: messageOf(error) };
  }
  try {
    const started = await startReferenceColumn(id);
    describeVersions(column, started.versions);
    return {
      column,
      open: {
        run: (testCase) => runOnReference(started, testCase),
        refuses: (testCase) => {
          try {
            describeRequest(testCase);
            return undefined;
          } catch (error) {
            return messageOf(error);
          }
        },
        stop: () => started.stop(),
      },
    };
  } catch (error) {
    return { column, reason: messageOf(error) };
  }
}

function describeVersions(column: MatrixColumn, versions: ReferenceVersions): void {
  column.label = column.id === versions.codemode ? column.id : `${column.id} (${versions.codemode})`;
  column.versions = {
    codemode: versions.codemode,
    executor: null,
    workerd: versions.workerd,
    wrangler: versions.wrangler,
    compatibilityDate: versions.sandboxCompatibilityDate,
    compatibilityFlags: [...versions.sandboxCompatibilityFlags],
    hostCompatibilityDate: versions.hostCompatibilityDate,
    hostCompatibilityFlags: [...versions.hostCompatibilityFlags],
  };
}
