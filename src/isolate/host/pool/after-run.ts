/**
 * What the pool does with a member once its run is over: by the run's verdict on its process
 * (`ProcessFate`, run/run-ending.ts) and by where the member and the pool are as it comes back.
 * The one place that decides it; `Pool.release` carries it out.
 */
import type { ProcessFate } from '../run/run-ending.js';
import type { EndCause } from './pool-member.js';

/** Where the member is as its run hands it back. */
export type ReleaseMoment =
  /** Its process has already ended (and its end was counted). */
  | 'ended'
  /** The pool is being disposed. */
  | 'disposing'
  /** Neither: it may serve again. */
  | 'serving';

/** What the pool does with the member. */
export type AfterRun =
  /** Drop it: its process is gone and its end was counted. */
  | { do: 'forget' }
  /** Nothing: its process is ending, and its end (the pool's `#ended`) drops it. */
  | { do: 'awaitEnd' }
  /** End its process now. */
  | { do: 'end'; cause: EndCause }
  /** End its process now, or, while it holds retained executions, once the last is closed. */
  | { do: 'retire'; cause: EndCause }
  /** Serve again, unless it is spent: it holds a retained execution, is worn, or is draining. */
  | { do: 'reuse' };

const forget: AfterRun = { do: 'forget' };
const awaitEnd: AfterRun = { do: 'awaitEnd' };
const endDisposed: AfterRun = { do: 'end', cause: 'disposed' };

const AFTER_RUN: Readonly<Record<ProcessFate, Readonly<Record<ReleaseMoment, AfterRun>>>> = {
  keep: { ended: forget, disposing: endDisposed, serving: { do: 'reuse' } },
  // It may still be running the abandoned code.
  retire: { ended: forget, disposing: endDisposed, serving: { do: 'retire', cause: 'killed' } },
  // Wedged: it did not answer the give-up.
  kill: { ended: forget, disposing: endDisposed, serving: { do: 'end', cause: 'killed' } },
  // Its run killed it at a cap: it is ending already.
  killed: { ended: forget, disposing: awaitEnd, serving: awaitEnd },
  // It died: its end is under way.
  dead: { ended: forget, disposing: awaitEnd, serving: awaitEnd },
};

export function afterRun(fate: ProcessFate, moment: ReleaseMoment): AfterRun {
  return AFTER_RUN[fate][moment];
}
