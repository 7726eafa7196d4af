/** Every side a case can run on, by column id, and how to start it. */
import type { ColumnId } from '../columns.js';
import type { Side } from './side.js';

export type { Side } from './side.js';

/** Each side is imported when asked for, so a run on one side never loads another's machinery. */
export async function startSide(name: ColumnId): Promise<Side> {
  if (name === 'ours') return (await import('./ours.js')).createOursSide();
  if (name === 'ours-remote') return (await import('./remote.js')).startRemoteSide();
  return (await import('./reference.js')).startReferenceSide(name);
}
