/**
 * The known name a mistyped one was most likely meant to be, for a did-you-mean (an option, a
 * daemon flag, a case file's key): the closest by Levenshtein distance, ignoring case, when it is
 * within a third of the name's length (at least one edit), so a slip gets a suggestion and another
 * word gets none. Runtime-neutral: every entry point's option check reads it, the root entry's too,
 * which a Worker bundles, so the distance comes from `leven`, an ES module with no Node import.
 */
import leven from 'leven';

export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let nearest: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const edits = leven(name.toLowerCase(), candidate.toLowerCase());
    if (edits <= allowed && (nearest === undefined || edits < nearest.distance))
      nearest = { name: candidate, distance: edits };
  }
  return nearest?.name;
}
