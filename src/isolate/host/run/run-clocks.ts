/**
 * The clocks of a run (the state machine that decides how it ends is run-ending.ts; the sandbox's
 * own clock is workerd/run-race.ts's race). They tell the run when a bound is spent: its wall-clock
 * bound (`timeout`, kept by the run clock), or its CPU-time bound (`cpuTimeout`, a CPU watch over
 * the whole run). When the run is given up, they ask the supervisor to give it up (`cancel`, whose
 * `raceMayWin` says the sandbox's race may still prove a win), give the process a grace period to
 * answer, and tell the run when it spins instead.
 */
import type { CancelMessage } from '../../contract/messages.js';
import { MAX_TIMER_MS } from '../options/max-timer.js';
import { type CpuTimed, CpuWatch } from './cpu-watch.js';

/**
 * How a process that does not answer `cancel` is judged. It is spinning (its only JavaScript
 * thread is held) once it has burned SPIN_CPU_MS of CPU time since the cancel without answering,
 * and is killed. CPU time, not a share of the wall clock: a process that is merely not scheduled
 * on a loaded host burns little, and one that is still loading the run's worker (a bound of 0
 * gives up before the program starts) burns a few tens of milliseconds, so neither is mistaken for
 * a spin whatever the host's scheduling. Such a process is kept while it makes progress (its CPU
 * time grows), up to GRACE_CAP_MS; one that burns nothing for STUCK_MS (stopped, or wedged
 * without computing) is killed then. The check is made every CANCEL_GRACE_MS.
 *
 * At the wall-clock bound, where upstream lets a turn run to its end (its timer cannot fire
 * mid-turn), the turn in flight gets `turnGraceMs` of CPU time instead (at least SPIN_CPU_MS), and
 * the wall-clock cap grows by GRACE_CAP_PER_CPU times it, for a host that gives it a fraction of a
 * core: what it settles in that time is the result (the sandbox's race proves it, run-race.ts).
 */
const CANCEL_GRACE_MS = 50;
const SPIN_CPU_MS = 200;
const STUCK_MS = 2_000;
const GRACE_CAP_MS = 10_000;
const GRACE_CAP_PER_CPU = 4;

/** The bounds of one run. */
export interface RunBounds {
  /** The wall-clock bound, in ms. */
  timeout: number;
  /** The CPU time the run's process may spend from its start, in ms; `null`: no such bound. */
  cpuTimeout: number | null;
  /** Whether host waits (tool calls, fetches) count against `timeout`. */
  countHostWaits: boolean;
  /** The CPU time a turn still running at the wall-clock bound may spend to finish, in ms. */
  turnGraceMs: number;
}

/** The run's process, as its clocks use it. */
export interface ClockedProcess extends CpuTimed {
  send(message: CancelMessage): void;
}

/** What the clocks tell the run (each is an event of run-ending.ts). */
export interface RunClockEvents {
  /** A bound is spent: the wall clock's (`timeout`) or the CPU time's (`cpu`). */
  expired(bound: 'timeout' | 'cpu'): void;
  /** The process did not answer `cancel` within its grace, and spins. */
  spinning(): void;
}

/**
 * The clocks of one run: its bounds' clocks, and the give-up with its grace. They hold no verdict
 * of their own: each thing they see is an event the run feeds to run-ending.ts.
 */
export class RunClocks {
  readonly #process: ClockedProcess;
  readonly #run: string;
  readonly #events: RunClockEvents;
  readonly #clock: RunClock;
  /** Over the whole run: its process's CPU time from the start, against `cpuTimeout` when set. */
  readonly #cpu: CpuWatch;
  readonly #turnGraceMs: number;
  #grace: NodeJS.Timeout | undefined;

  constructor(process: ClockedProcess, run: string, bounds: RunBounds, events: RunClockEvents) {
    this.#process = process;
    this.#run = run;
    this.#events = events;
    this.#turnGraceMs = bounds.turnGraceMs;
    // While a host wait stops it, the clock counts the process's own CPU time instead.
    this.#clock = new RunClock(bounds.timeout, bounds.countHostWaits, process, () => events.expired('timeout'));
    this.#cpu = new CpuWatch(process, bounds.cpuTimeout ?? Number.POSITIVE_INFINITY, () => events.expired('cpu'));
  }

  /** Arms the clocks, once the run's start message is sent. */
  start(): void {
    this.#clock.start();
    this.#cpu.start();
  }

  /**
   * Arms the clocks at an execution's hand-off, its run clock counting only its process's own CPU
   * time until the program has started (`programStarted`): the time a busy process takes to be
   * scheduled and load the run's worker is not the program's, while a module's top level that
   * spins still spends the budget.
   */
  startLoading(): void {
    this.#clock.startLoading();
    this.#cpu.start();
  }

  /** The CPU time the run's process has spent since the run's start, or undefined where it cannot tell. */
  cpuUsed(): number | undefined {
    return this.#cpu.used();
  }

  /** The program has started: the run clock counts the wall clock from now. */
  programStarted(): void {
    this.#clock.loaded();
  }

  beginHostWait(): void {
    this.#clock.beginHostWait();
  }

  endHostWait(): void {
    this.#clock.endHostWait();
  }

  /**
   * Stops every clock and the grace watch. Returns the CPU time the process spent since `start`,
   * read before the process may be killed (undefined for one that already died, for a run never
   * started, or where the platform cannot tell).
   */
  stop(): number | undefined {
    const used = this.#cpu.used();
    this.#cpu.stop();
    this.#clock.stop();
    clearTimeout(this.#grace);
    return used;
  }

  /**
   * Asks the supervisor to give the run up, and reports a process that does not answer because it
   * spins. `raceMayWin`: at the wall-clock bound, where the sandbox's race may still prove a win,
   * and the turn in flight may finish within `turnGraceMs` of CPU time.
   */
  giveUp(raceMayWin: boolean): void {
    const spinCpuMs = raceMayWin ? Math.max(SPIN_CPU_MS, this.#turnGraceMs) : SPIN_CPU_MS;
    const capMs = raceMayWin ? GRACE_CAP_MS + GRACE_CAP_PER_CPU * spinCpuMs : GRACE_CAP_MS;
    this.#clock.stop();
    this.#cpu.stop();
    this.#process.send({ t: 'cancel', run: this.#run, raceMayWin });
    const since = performance.now();
    const cpuAtCancel = this.#process.cpuMs();
    let cpuBefore = cpuAtCancel;
    let progressAt = since;
    const check = () => {
      const now = performance.now();
      const cpuNow = this.#process.cpuMs();
      const spinning = cpuAtCancel === undefined || cpuNow === undefined || cpuNow - cpuAtCancel >= spinCpuMs;
      if (cpuNow !== undefined && cpuBefore !== undefined && cpuNow > cpuBefore) progressAt = now;
      cpuBefore = cpuNow;
      if (spinning || now - progressAt >= STUCK_MS || now - since >= capMs) {
        this.#events.spinning();
        return;
      }
      this.#grace = setTimeout(check, CANCEL_GRACE_MS);
    };
    this.#grace = setTimeout(check, CANCEL_GRACE_MS);
  }
}

/**
 * The run clock: a budget of milliseconds that, unless host waits count, stops while a tool call
 * or an outbound request is in flight. Overlapping waits stop it once.
 *
 * A stopped clock still counts what the sandbox does meanwhile: the process's own CPU time during
 * a host wait is spent from the budget (cpu-watch.ts), so a program that starts a tool call and
 * then spins is stopped at its bound although its clock is stopped.
 */
export class RunClock {
  readonly #budget: number;
  readonly #countHostWaits: boolean;
  readonly #onExpire: () => void;
  readonly #cpuTimed: CpuTimed;
  #spent = 0;
  #runningSince: number | undefined;
  #waits = 0;
  /** Stopped from the hand-off until the program has started (`startLoading`). */
  #loading = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** While the clock is stopped for a host wait: the CPU time at the stop, and its watch. */
  #pausedAtCpu: number | undefined;
  #cpuWatch: CpuWatch | undefined;

  constructor(budgetMs: number, countHostWaits: boolean, cpuTimed: CpuTimed, onExpire: () => void) {
    this.#budget = budgetMs;
    this.#countHostWaits = countHostWaits;
    this.#cpuTimed = cpuTimed;
    this.#onExpire = onExpire;
  }

  start(): void {
    this.#resume();
  }

  /**
   * Starts the clock stopped, as for a host wait: it counts the process's own CPU time until
   * `loaded`, whether host waits count or not.
   */
  startLoading(): void {
    this.#loading = true;
    this.#runningSince = performance.now();
    this.#pause();
  }

  /** The program has started: the clock runs from now (unless a host wait holds it). */
  loaded(): void {
    if (!this.#loading) return;
    this.#loading = false;
    if (this.#waits === 0) this.#resume();
  }

  beginHostWait(): void {
    if (this.#countHostWaits || this.#stopped) return;
    this.#waits += 1;
    if (this.#waits === 1) this.#pause();
  }

  endHostWait(): void {
    if (this.#countHostWaits || this.#stopped || this.#waits === 0) return;
    this.#waits -= 1;
    if (this.#waits === 0 && !this.#loading) this.#resume();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#cpuWatch?.stop();
  }

  #pause(): void {
    if (this.#runningSince === undefined) return;
    this.#spent += performance.now() - this.#runningSince;
    this.#runningSince = undefined;
    clearTimeout(this.#timer);
    this.#pausedAtCpu = this.#cpuTimed.cpuMs();
    this.#cpuWatch = new CpuWatch(this.#cpuTimed, Math.max(0, this.#budget - this.#spent), () => {
      if (this.#stopped) return;
      this.stop();
      this.#onExpire();
    });
    this.#cpuWatch.start(this.#pausedAtCpu);
  }

  #resume(): void {
    if (this.#stopped) return;
    this.#cpuWatch?.stop();
    this.#cpuWatch = undefined;
    // Read only after a host wait: the first start has no CPU time to add.
    if (this.#pausedAtCpu !== undefined) {
      const cpuNow = this.#cpuTimed.cpuMs();
      if (cpuNow !== undefined) this.#spent += cpuNow - this.#pausedAtCpu;
    }
    this.#pausedAtCpu = undefined;
    this.#runningSince = performance.now();
    this.#arm();
  }

  #arm(): void {
    const remaining = this.#budget - this.#spent - (performance.now() - this.#runningSince!);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        if (this.#stopped || this.#runningSince === undefined) return;
        // Timers may fire a hair early; only a spent budget expires.
        if (this.#spent + (performance.now() - this.#runningSince) < this.#budget) {
          this.#arm();
          return;
        }
        this.stop();
        this.#onExpire();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(remaining))),
    );
  }
}
