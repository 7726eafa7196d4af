/**
 * The known name a mistyped one was most likely meant to be, for a did-you-mean (an option, a
 * daemon flag, a case file's key, a harness command's option): the closest by Levenshtein distance,
 * ignoring case, when it is within a third of the name's length (at least one edit), so a slip gets
 * a suggestion and another word gets none. Two neighbouring letters swapped (`--prot` for `--port`)
 * count as one edit: it is the commonest slip, and Levenshtein counts it as two, which a short name
 * has no room for. Runtime-neutral: every entry point's option check reads it, the root entry's
 * too, which a Worker bundles, so the distance comes from `leven`, an ES module with no Node import.
 */
import leven from 'leven';

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

/** Levenshtein's distance, except that one swap of neighbouring letters is one edit. */
function distance(typed: string, candidate: string): number {
  const edits = leven(typed, candidate);
  return edits === 2 && isOneSwap(typed, candidate) ? 1 : edits;
}

function isOneSwap(typed: string, candidate: string): boolean {
  if (typed.length !== candidate.length) return false;
  const at = [...typed].findIndex((letter, index) => letter !== candidate[index]);
  return (
    at >= 0 &&
    typed[at] === candidate[at + 1] &&
    typed[at + 1] === candidate[at] &&
    typed.slice(at + 2) === candidate.slice(at + 2)
  );
}
