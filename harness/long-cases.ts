/**
 * The cases that wait longest on a real clock, whatever the machine: a 31-second timer, a tool
 * that answers after 8 or 6 seconds, a run expired 4 seconds in. A column starts them before its
 * other cases, so each wait overlaps the rest of the column (a long case leaves the lane after
 * 2 s: harness/lanes.ts) instead of ending it: where the 31-second case started in catalogue
 * order, most of a reference column had run by then, and the file then waited for it alone.
 *
 * Only waits are listed, longest first, and no more of them than the lane lets wait at once, so
 * none holds the lane while the others wait. A case that is long because it computes (a spin to
 * its bound, 10,000 tool calls) gains nothing from starting early on a busy machine. The matrix
 * adds, column by column, the cases that ran long on an earlier one (engine.ts).
 */
export const LONG_WAITS: readonly string[] = [
  'timeout-default-outlasts-30-seconds',
  'runtime-rollback-during-pass-ends-completed',
  'timeout-native-clock-skips-tool-waits',
  'runtime-expire-running',
];

/**
 * The items in the order a lane should start them: those in `long` first, in its order, then the
 * others in their own.
 */
export function longFirst<T extends { id: string }>(items: readonly T[], long: Iterable<string>): T[] {
  const first = [...long].flatMap((id) => items.filter((item) => item.id === id));
  return [...first, ...items.filter((item) => !first.includes(item))];
}
