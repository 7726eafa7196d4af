/**
 * Opening each column the matrix runs, through the other helpers' public APIs, loaded lazily: an
 * API that is not in the tree (or breaks while starting) makes that column an infra-error with the
 * reason, instead of crashing the run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Case, Outcome } from '../../case-model.js';
import { REFERENCE_COLUMNS } from '../../case-model.js';
import type { ColumnVersions, MatrixColumn } from '../model.js';
import { REPO_ROOT } from '../paths.js';
import { texts } from '../texts.js';

/** A running column: runs one case to an outcome. Rejects only when the harness broke. */
export interface OpenColumn {
  run(testCase: Case): Promise<Outcome>;
  /** Throws the refusal when the column cannot express the case (checked before anything is sent). */
  refuses?(testCase: Case): string | undefined;
  stop(): Promise<void>;
}

export type Opened = { column: MatrixColumn; open: OpenColumn } | { column: MatrixColumn; reason: string };

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const EMPTY_VERSIONS: ColumnVersions = { codemode: null, executor: null, workerd: null, wrangler: null, compatibilityDate: null, compatibilityFlags: [] };

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The compatibility settings our isolate loads every execution with (upstream's, by design). */
async function ourSandboxCompatibility(): Promise<{ date: string | null; flags: string[] }> {
  try {
    const isolate = await import('../../../src/isolate/index.js');
    return { date: isolate.SANDBOX_COMPATIBILITY_DATE, flags: [...isolate.SANDBOX_COMPATIBILITY_FLAGS] };
  } catch {
    // The isolate cannot load: the column reports that itself when it opens.
    return { date: null, flags: [] };
  }
}

export async function ourVersions(): Promise<ColumnVersions> {
  const manifest = readJson(join(REPO_ROOT, 'package.json'));
  const requireFromRoot = createRequire(join(REPO_ROOT, 'package.json'));
  let workerd: string | null = null;
  for (const base of requireFromRoot.resolve.paths('workerd') ?? []) {
    const found = readJson(join(base, 'workerd', 'package.json'));
    if (found) {
      workerd = String(found.version);
      break;
    }
  }
  const compatibility = await ourSandboxCompatibility();
  return {
    ...EMPTY_VERSIONS,
    executor: manifest ? String(manifest.version) : null,
    workerd,
    compatibilityDate: compatibility.date,
    compatibilityFlags: compatibility.flags,
  };
}

/** The remote column runs when its sources are in the tree (src/remote and src/server hold code). */
export function remoteSourcesExist(): boolean {
  const hasCode = (dir: string) => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith('.ts'));
  return hasCode(join(REPO_ROOT, 'src', 'remote')) && hasCode(join(REPO_ROOT, 'src', 'server'));
}

/** The reference columns the reference harness declares, oldest first (the case model's list until it loads). */
export async function referenceColumnIds(): Promise<string[]> {
  try {
    const reference = await import('../../reference/index.js');
    return [...reference.COLUMN_NAMES];
  } catch {
    return [...REFERENCE_COLUMNS];
  }
}

/** The columns of a run, in report order: ours, ours-remote, then releases oldest to newest. */
export async function plannedColumns(): Promise<Pick<MatrixColumn, 'id' | 'kind'>[]> {
  const columns: Pick<MatrixColumn, 'id' | 'kind'>[] = [{ id: 'ours', kind: 'ours' }];
  if (remoteSourcesExist()) columns.push({ id: 'ours-remote', kind: 'ours-remote' });
  for (const id of await referenceColumnIds()) columns.push({ id, kind: 'reference' });
  return columns;
}

/** Ours, in-process or remote, through the catalogue's side registry (harness/sides). */
export async function openOurSide(id: 'ours' | 'ours-remote'): Promise<Opened> {
  const kind = id;
  const column: MatrixColumn = { id, label: id, kind, versions: await ourVersions() };
  let sides: typeof import('../../sides/index.js');
  try {
    sides = await import('../../sides/index.js');
  } catch (error) {
    return { column, reason: texts.apiMissing(`the ${id} side (harness/sides)`, messageOf(error)) };
  }
  try {
    const side = await sides.startSide(id);
    return { column, open: { run: (testCase) => side.run(testCase), stop: () => side.dispose() } };
  } catch (error) {
    return { column, reason: texts.apiMissing(`the ${id} side`, messageOf(error)) };
  }
}

/** One reference column under `wrangler dev`, through harness/reference. */
export async function openReferenceColumn(id: string): Promise<Opened> {
  const column: MatrixColumn = { id, label: id, kind: 'reference', versions: { ...EMPTY_VERSIONS } };
  let reference: typeof import('../../reference/index.js');
  try {
    reference = await import('../../reference/index.js');
  } catch (error) {
    return { column, reason: texts.apiMissing('the reference harness (harness/reference)', messageOf(error)) };
  }
  // Versions first, so a column that fails to start still says what it would have run.
  try {
    describeVersions(column, reference.readColumnVersions(reference.columnByName(id)));
  } catch (error) {
    return { column, reason: messageOf(error) };
  }
  try {
    const started = await reference.startReferenceColumn(id);
    describeVersions(column, started.versions);
    return {
      column,
      open: {
        run: (testCase) => reference.runOnReference(started, testCase),
        refuses: (testCase) => {
          try {
            reference.describeRequest(testCase);
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

function describeVersions(column: MatrixColumn, versions: import('../../reference/index.js').ColumnVersions): void {
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
