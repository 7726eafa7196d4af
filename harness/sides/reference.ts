/**
 * A reference column as a side: the real `DynamicWorkerExecutor` of one release under `wrangler dev`,
 * started and stopped by `harness/reference`.
 */

import type { SideName } from '../case-model.js';
import { type ColumnVersions, runOnReference, startReferenceColumn } from '../reference/index.js';
import type { Side } from './side.js';

/** A started column also tells what it runs on, and what wrangler printed (for diagnosing a failure). */
export interface ReferenceSide extends Side {
  readonly versions: ColumnVersions;
  output(): string;
}

export async function startReferenceSide(name: Exclude<SideName, 'ours' | 'ours-remote'>): Promise<ReferenceSide> {
  const column = await startReferenceColumn(name);
  return {
    name,
    versions: column.versions,
    run: (item) => runOnReference(column, item),
    output: () => column.output(),
    dispose: () => column.stop(),
  };
}
