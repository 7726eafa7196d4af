/**
 * The output gate: a facet's writes are held in one open SQLite transaction and committed, all at
 * once, before anything leaves the facet (a call out through a stub, or a result or error back
 * through one), or at the end of the turn of the event loop. So one fsync covers every statement of
 * a facet call instead of one each, and nothing the facet wrote can be seen outside, or acted on
 * (a connector's side effect), before it is on disk: a SIGKILL can only lose writes nobody saw.
 * This is what workerd does for a Durable Object: implicit transactions held until its output gate.
 */

/** Commits of held transactions, run when the gate opens. */
const held = new Set<() => void>();
let turnEndScheduled = false;

/** Holds a transaction that `commit` ends, until the gate next opens. */
export function holdUntilGate(commit: () => void): void {
  held.add(commit);
  if (turnEndScheduled) return;
  turnEndScheduled = true;
  setImmediate(() => {
    turnEndScheduled = false;
    try {
      openGate();
    } catch {
      // No caller to tell: the storage whose commit failed keeps the error for its next call.
    }
  });
}

/** Commits every held transaction; the first failure is thrown once all have been tried. */
export function openGate(): void {
  if (held.size === 0) return;
  const commits = [...held];
  held.clear();
  let failure: unknown;
  for (const commit of commits) {
    try {
      commit();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}
