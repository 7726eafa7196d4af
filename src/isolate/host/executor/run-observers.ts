/**
 * The observers `IsolateExecutor.observeRuns` registers, told of every run that settles with a
 * result (the daemon's metrics use them). Apart from the executor so that an observer's failure
 * stays its own: it cannot fail a run, nor keep the next observer from being told.
 */
import type { CancellableMethod } from '../../../protocol/cancellation.js';

/** One settled run (an execution or a handle call), as `observeRuns` tells it. */
export interface RunReport {
  kind: CancellableMethod;
  /** The CPU time its process spent on the run, in ms; undefined where the platform does not tell (not Linux). */
  cpuMs: number | undefined;
}

export type RunObserver = (report: RunReport) => void;

export class RunObservers {
  readonly #observers = new Set<RunObserver>();

  /** Adds `observer`; returns the function that removes it. */
  add(observer: RunObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  report(report: RunReport): void {
    for (const observer of this.#observers) {
      try {
        observer(report);
      } catch {
        // An observer's failure is its own; the run's outcome stands.
      }
    }
  }
}
