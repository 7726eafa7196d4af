/**
 * A reference column as a side: the real `DynamicWorkerExecutor` of one release under `wrangler dev`,
 * started and stopped by `harness/reference`.
 */
import { type ColumnName, runOnReference, startReferenceColumn } from '../reference/index.js';
import type { Side } from './side.js';

export async function startReferenceSide(name: ColumnName): Promise<Side> {
  const column = await startReferenceColumn(name);
  return {
    name,
    run: (item) => runOnReference(column, item),
    output: () => column.output(),
    dispose: () => column.stop(),
  };
}
