/**
 * A reference column as a side: the real `DynamicWorkerExecutor` of one release under `wrangler dev`,
 * started and stopped by `harness/reference`.
 */
import { runOnReference, startReferenceColumn } from '../reference/index.js';
import type { SideName } from '../case-model.js';
import type { Side } from './side.js';

export async function startReferenceSide(name: Exclude<SideName, 'ours' | 'ours-remote'>): Promise<Side> {
  const column = await startReferenceColumn(name);
  return {
    name,
    run: (item) => runOnReference(column, item),
    dispose: () => column.stop(),
  };
}
