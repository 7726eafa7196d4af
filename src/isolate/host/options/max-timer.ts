/**
 * The longest delay a Node timer takes; a longer one fires at once. An option that sets a timer
 * is bounded by it, and every timer of the pool and the run clock is clamped to it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
