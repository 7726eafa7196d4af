/**
 * The pool's sense of time, passed in so its policy owns no timer: the executor gives it the real
 * one, and a unit test a fake it advances by hand.
 */
import { MAX_TIMER_MS } from '../options/max-timer.js';

export interface PoolClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Calls `callback` once after `delayMs`; the returned function cancels it. */
  schedule(callback: () => void, delayMs: number): () => void;
}

/** The host's monotonic clock; its timers do not keep the host's event loop alive (see loop-hold.ts). */
export const systemClock: PoolClock = {
  now: () => performance.now(),
  schedule(callback, delayMs) {
    const timer = setTimeout(callback, Math.min(MAX_TIMER_MS, delayMs));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
