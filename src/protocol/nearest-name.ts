/**
 * The known name a mistyped one was most likely meant to be, for a did-you-mean (an option, a
 * daemon flag, a case file's key): the closest by Levenshtein distance, ignoring case, when it is
 * within a third of the name's length (at least one edit), so a slip gets a suggestion and another
 * word gets none. Runtime-neutral and without a dependency: every entry point's option check reads
 * it, the root entry's too, which a Worker bundles.
 */

/** The Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let nearest: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const edits = distance(name.toLowerCase(), candidate.toLowerCase());
    if (edits <= allowed && (nearest === undefined || edits < nearest.distance))
      nearest = { name: candidate, distance: edits };
  }
  return nearest?.name;
}
