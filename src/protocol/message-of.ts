/**
 * The message of any thrown value: `err.message` for an Error, `String(err)` otherwise. A module of
 * its own, free of everything else, so the worker bundles take it without the error classes.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
