/**
 * A side is one place a case runs: ours in-process, ours over a daemon, or a reference column.
 * The catalogue spec and the `case` command treat every side alike through this interface.
 */
import { type Case, type Outcome, SIDE_NAMES, type SideName } from '../case-model.js';

export interface Side {
  readonly name: SideName;
  /** Runs one case and returns its normalized outcome. A rejection of `execute` is `threw`, not a throw. */
  run(item: Case): Promise<Outcome>;
  /** Stops everything the side started. */
  dispose(): Promise<void>;
}

const OUR_SIDES: readonly SideName[] = ['ours', 'ours-remote'];

export function isReferenceColumn(side: SideName): boolean {
  return !OUR_SIDES.includes(side);
}

/**
 * Why a case does not run on a side, or `null` when it does: a `skipOn` entry naming the side,
 * or `reference: false` on a reference column.
 */
export function skipReason(item: Case, side: SideName): string | null {
  if (item.reference === false && isReferenceColumn(side)) return `reference: false — ${item.reason ?? ''}`;
  const skip = item.skipOn?.find((entry) => entry.versions.includes(side));
  return skip ? skip.reason : null;
}

/**
 * Whose outcome a case without `expect` is compared with on a side: ours with every reference
 * column that runs the case (the reference decides), every other side with ours. `among` is the
 * sides of this run; the catalogue spec and the matrix runner both ask here.
 */
export function comparisonPartners(item: Case, side: SideName, among: readonly SideName[] = SIDE_NAMES): SideName[] {
  if (side === 'ours') return among.filter((other) => isReferenceColumn(other) && skipReason(item, other) === null);
  return among.includes('ours') ? ['ours'] : [];
}
