/**
 * Where a member's start goes, summed over an executor's starts, for `stats().starts` and the
 * benchmark (docs/benchmarks.md): the host's own steps, then the wait for workerd (through the
 * confinement chain, when confined) to listen, then the host's connection to it.
 */

/** The steps of one start, in the order they run. */
const START_STEPS = ['directory', 'config', 'command', 'spawn', 'ready', 'connect'] as const;

export type StartStep = (typeof START_STEPS)[number];

/**
 * Milliseconds of one start by step:
 * - `directory`: its private directory made (and owned by the member's uid, when the host is root);
 * - `config`: its workerd config composed;
 * - `command`: its command line, and, confined, the seccomp program written for it;
 * - `spawn`: the config written and the wrapper spawned (the host's synchronous `spawn`);
 * - `ready`: from the spawn until workerd listens: the confinement chain (prlimit, setpriv, bwrap)
 *   when confined, and workerd's own start (its config parsed, the supervisor loaded);
 * - `connect`: the host's WebSocket to it opened.
 */
export type StartBreakdown = Record<StartStep, number>;

export interface StartTimesStats {
  /** Starts that completed. */
  count: number;
  /** Their mean duration, in ms, whole and by step. */
  meanMs: number;
  meanByStepMs: StartBreakdown;
}

const zero = (): StartBreakdown => ({ directory: 0, config: 0, command: 0, spawn: 0, ready: 0, connect: 0 });

/** The sums over an executor's completed starts. */
export class StartTimes {
  #count = 0;
  readonly #sums = zero();

  /** A timer for one start: `mark(step)` closes that step at now; `done()` counts the start. */
  begin(): { mark(step: StartStep): void; done(): void } {
    const steps = zero();
    let last = performance.now();
    return {
      mark: (step) => {
        const now = performance.now();
        steps[step] += now - last;
        last = now;
      },
      done: () => {
        this.#count += 1;
        for (const step of START_STEPS) this.#sums[step] += steps[step];
      },
    };
  }

  stats(): StartTimesStats {
    const meanByStepMs = zero();
    let meanMs = 0;
    for (const step of START_STEPS) {
      meanByStepMs[step] = this.#count === 0 ? 0 : this.#sums[step] / this.#count;
      meanMs += meanByStepMs[step];
    }
    return { count: this.#count, meanMs, meanByStepMs };
  }
}
