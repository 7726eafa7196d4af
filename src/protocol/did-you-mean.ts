/**
 * The did-you-mean an unknown option's refusal ends with, in a module of its own with nothing
 * else in it: the isolate's contract texts import it, and those are bundled into every sandbox, so
 * it must not bring protocol/texts.ts's module-level work (a regular expression) with it.
 */
/** An unknown option's did-you-mean, empty when no known name is near. */
export function formatDidYouMean(nearest: string | undefined): string {
  return nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
}
