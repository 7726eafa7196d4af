/**
 * The known name a mistyped one was most likely meant to be, for a did-you-mean: the closest by
 * edit distance (an insertion, a deletion, a substitution or two neighbours swapped each count
 * one), when it is close enough to be a slip rather than another word.
 */

/** Optimal string alignment distance: Levenshtein's, plus a swap of two neighbours as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1)
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  return rows[a.length]![b.length]!;
}

/** The closest of `known` to `name`, if within a third of its length (at least one edit), else undefined. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let nearest: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= allowed && (nearest === undefined || distance < nearest.distance))
      nearest = { name: candidate, distance };
  }
  return nearest?.name;
}
