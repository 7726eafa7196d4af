/** Every side a case can run on, by name, and how to start it. */
import { REFERENCE_COLUMNS, type SideName } from '../case-model.js';
import type { Side } from './side.js';

export type { Side } from './side.js';
export { isReferenceColumn, skipReason } from './side.js';

/** The sides that can be started today: all of them. */
export const STARTABLE_SIDES: readonly SideName[] = ['ours', 'ours-remote', ...REFERENCE_COLUMNS];

/** Each side is imported when asked for, so a run on one side never loads another's machinery. */
export async function startSide(name: SideName): Promise<Side> {
  if (name === 'ours') return (await import('./ours.js')).createOursSide();
  if (name === 'ours-remote') return (await import('./remote.js')).startRemoteSide();
  return (await import('./reference.js')).startReferenceSide(name);
}
