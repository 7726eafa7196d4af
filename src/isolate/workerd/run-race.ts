/**
 * How a run ends, the sandbox's half (the host's is host/run/run-ending.ts, whose clocks are
 * run-clocks.ts; the state diagram is in docs/isolate.md). The host's clock decides that a run is over; the sandbox proves, on its
 * own clock, that a run the host gave up at its bound still won. Two parts, one per bundle:
 *
 * - The race, in the run's dynamic worker (harness.ts): upstream's timeout, as a proof that a run
 *   won, and `raceVerdict`, the answer to the supervisor's `cancel`.
 * - The supervision, in the supervisor (supervisor.ts): `supervise` runs a call until its outcome
 *   or the host's `cancel`, and then asks the race for its verdict.
 *
 * The verdict travels in the channel's fields: the `cancel` message's `raceMayWin` (the host gave
 * up at the wall-clock bound, so a win is still possible), the `done` message's
 * `settledBeforeDeadline` (the run settled before its race was lost) and the `cancelled` message
 * (it lost).
 */

import type { LogEntry } from '../../protocol/types.js';
import type { DoneMessage, SupervisorMessage } from '../contract/messages.js';
import { $clearTimeout, $now, $Promise, $setTimeout } from './intrinsics.js';
import type { RaceVerdict, RunId, SandboxEntrypoint, SandboxWorker } from './types.js';

// ---- the race (harness.ts) ----------------------------------------------------------------------
// Upstream races the user call against a setTimeout(bound) armed after the call's synchronous
// prefix, the user call first. The host's clock (which may pause for host waits) decides a loss;
// this race only proves a win: a run that settled in time in the sandbox is in time even when the
// host's clock, started earlier (at the program's start), has already expired. One run at a time per worker.
//
// Event order decides, as upstream's Promise.race does: a run that ends after the race timer
// fired has lost, and one that ends before it has won, however long past its deadline its last
// turn ran (upstream's timer cannot fire mid-turn; the host bounds such a turn by `turnGraceMs`
// of CPU, run-clocks.ts). User code can clear the race timer by guessing its id, so a timer that
// never fired proves nothing by itself: past its deadline by more than LATE_END_SLACK_MS (wider
// than the host's scheduler keeps a process off a core within a turn), a run wins only while the
// host's give-up is not answered yet, that is, in a turn that held the thread since before the
// host's bound. A run that cleared the race timer and ended in a later turn finds the give-up
// answered by the clock (lost); so clearing it gains nothing the grace does not give every run.
//
// The clock (`Date.now()`, which advances in real time here) also decides a run that has not ended
// when the host asks for the verdict (`raceVerdict`): past its deadline, give or take
// CLOCK_SLACK_MS, it has lost. User code can also call `raced`, `returned` and `threw` itself
// (they are exports of the harness module, whose name a stack frame shows): the first `raced` arms
// the race and no later call moves its deadline, and a run that ends more than once (only a forged
// call ends it early) is judged on the clock alone at every later end. A forged early win can then
// only make `cancel` wait for the run's own reply, which says it was late.
// The decision is not taken by a reaction on the program's promise: a second reaction there
// would end V8's async stack at the program's frame.

interface Race {
  run: string;
  /** Undecided while undefined. */
  won: boolean | undefined;
  timerFired: boolean;
  /** When the run's bound is up (`Date.now()`); Infinity until armed. */
  deadline: number;
  armed: boolean;
  /** What the latest ending call decided. */
  endedBeforeDeadline: boolean | undefined;
  /** How many calls ended the run: more than one means one was forged. */
  ends: number;
}

/** The run in flight in this worker: its race, its timers, and whether a success retains what it returned. */
export interface RunInFlight {
  race: Race;
  bound: number;
  retain: boolean;
  keepAlive: ReturnType<typeof setTimeout> | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

let race: Race | null = null;
let inFlight: RunInFlight | null = null;
const CLOCK_SLACK_MS = 10;
/** How late by the clock a run that ended before its race timer fired may end and still win (ms). */
const LATE_END_SLACK_MS = 250;
/** How long a cancel() that arrived before its run started waits for it, polling (ms). */
const EARLY_CANCEL_POLL_MS = 1;
/** As long as the host waits for a process that makes progress to answer (host/run/run-clocks.ts). */
const EARLY_CANCEL_WAIT_MS = 10_000;

function verdictOf(current: Race, logs: LogEntry[]): RaceVerdict {
  return current.won ? { won: true } : { won: false, logs };
}

function decide(current: Race, won: boolean): void {
  if (current.won === undefined) current.won = won;
}

/** A timer that never fires: while one is pending, workerd does not cancel the run as hung. */
const holdRequest = () => $setTimeout(() => {}, 0x7fffffff);

/**
 * A run always has a pending timer, as upstream's has its timeout timer: without one, workerd
 * cancels a run that awaits something that can never settle, with its own "hung" text, instead of
 * letting the host's bound end it. The race timer is that timer, and a holding one replaces it once
 * it fires. Only preludes, which may await before the race is armed, need a holding timer from the
 * start (`hold`). Otherwise none is made before the program runs, so the program's first timer has
 * id 1, as upstream's does.
 */
export function startRun(run: string, bound: number, retain: boolean, hold: boolean): RunInFlight {
  race = {
    run,
    won: undefined,
    timerFired: false,
    deadline: Infinity,
    armed: false,
    endedBeforeDeadline: undefined,
    ends: 0,
  };
  inFlight = { race, bound, retain, keepAlive: hold ? holdRequest() : undefined, timer: undefined };
  return inFlight;
}

/** The run in flight (`begin` or `invoke` started it). */
export function runInFlight(): RunInFlight {
  return inFlight as RunInFlight;
}

/** Arms the race timer: after the program's synchronous prefix, as upstream arms its own. */
export function armRace(current: RunInFlight): void {
  const state = current.race;
  if (state.armed) return;
  state.armed = true;
  state.deadline = $now() + current.bound;
  current.timer = $setTimeout(() => {
    state.timerFired = true;
    decide(state, false);
    if (inFlight === current) current.keepAlive ??= holdRequest();
  }, current.bound);
}

/**
 * The run ends now: in time when its race timer has not fired and either the clock is not far past
 * its deadline (LATE_END_SLACK_MS; CLOCK_SLACK_MS for a run a forged call ended before, whatever an
 * earlier call decided) or, for its first end, the race is still undecided (no give-up answered:
 * its last turn began before the host's bound). Its timers are cleared.
 */
export function endRun(current: RunInFlight): boolean {
  const state = current.race;
  const forgedBefore = state.ends++ > 0;
  const slack = forgedBefore ? CLOCK_SLACK_MS : LATE_END_SLACK_MS;
  const turnRanOn = !forgedBefore && state.won === undefined;
  const settledBeforeDeadline = !state.timerFired && ($now() <= state.deadline + slack || turnRanOn);
  decide(state, settledBeforeDeadline);
  state.endedBeforeDeadline = settledBeforeDeadline;
  if (current.timer !== undefined) $clearTimeout(current.timer);
  if (current.keepAlive !== undefined) $clearTimeout(current.keepAlive);
  return settledBeforeDeadline;
}

/** Whether the last run ended in time (a fault's report); one that never started had no clock running. */
export function lastRunSettledBeforeDeadline(): boolean {
  return race === null || (race.won !== false && race.endedBeforeDeadline !== false);
}

/**
 * Resolves with the verdict once the race is decided: when the run ends, or once the clock is
 * past its deadline. workerd cancels the continuations of a promise resolved from another
 * request's context (the run's), so only this call's own timers resolve it.
 */
function awaitVerdict(current: Race, logs: () => LogEntry[], resolve: (verdict: RaceVerdict) => void): void {
  const late = current.deadline + CLOCK_SLACK_MS - $now();
  // Started but not armed: it is still in its preludes, which the host's bound covers (a run
  // without preludes arms in the turn it starts, so a cancel never finds it here).
  if (current.won === undefined && (late < 0 || !current.armed)) decide(current, false);
  if (current.won !== undefined) {
    resolve(verdictOf(current, logs()));
    return;
  }
  $setTimeout(() => awaitVerdict(current, logs, resolve), late > 1 && late !== Infinity ? late + 1 : 1);
}

/**
 * The answer to the supervisor's `cancel` of `run`: {won: true} when it ended in time (its own
 * reply follows), else {won: false, logs}. With `awaitRace` (a timeout) it answers once the race is
 * decided, which is at most the time the sandbox's clock started after the host's; otherwise (an
 * abort) at once.
 */
export function raceVerdict(
  run: string,
  awaitRace: boolean,
  logs: () => LogEntry[],
): RaceVerdict | Promise<RaceVerdict> {
  const current = race !== null && race.run === run ? race : null;
  if (current !== null && current.won !== undefined) return verdictOf(current, logs());
  if (!awaitRace) return { won: false, logs: logs() };
  return new $Promise((resolve) => {
    if (current !== null) {
      awaitVerdict(current, logs, resolve);
      return;
    }
    // The calls crossed: the run has not started here yet. Poll for it, for a while; a run that
    // never starts here reports through its own reply, so giving up sends nothing.
    let waited = 0;
    const poll = () => {
      if (race !== null && race.run === run) awaitVerdict(race, logs, resolve);
      else if ((waited += EARLY_CANCEL_POLL_MS) > EARLY_CANCEL_WAIT_MS) resolve({ won: true });
      else $setTimeout(poll, EARLY_CANCEL_POLL_MS);
    };
    poll();
  });
}

// ---- the supervision (supervisor.ts) ------------------------------------------------------------

/** What the socket's context tells a run: once a `cancel` arrived, its `raceMayWin`. */
interface RunControl {
  cancel: boolean | null;
  /** Set by the run while it waits; called after `cancel` is set. */
  wake: () => void;
}

/** run id → what the socket's context tells the run in flight. */
const controls = new Map<RunId, RunControl>();

/** Made when the run's message arrives, so a `cancel` that overtakes the run's start is not lost. */
export function openControl(run: RunId): void {
  controls.set(run, { cancel: null, wake: () => {} });
}

/** A run that ends without `supervise` (its worker failed to load). */
export function closeControl(run: RunId): void {
  controls.delete(run);
}

/**
 * The host gave up on a run: at its wall-clock bound (`raceMayWin`), or past its CPU bound, or
 * because its caller went away. No control: the run is over (its reply is on its way). One that
 * has not reached its worker yet finds the request in its control.
 */
export function cancelRun(run: RunId, raceMayWin: boolean): void {
  const control = controls.get(run);
  if (control === undefined) return;
  control.cancel = raceMayWin;
  control.wake();
}

/**
 * Runs one call in a worker until it ends, or until the host gives it up: then the sandbox's race
 * says whether it still won (its `done` follows) or lost (`cancelled`, with its lines).
 * `outcomeOf` starts the call and never throws.
 */
export async function supervise(
  run: RunId,
  worker: SandboxWorker,
  outcomeOf: (entrypoint: Fetcher<SandboxEntrypoint>) => Promise<DoneMessage>,
  disposeQuietly: (value: unknown) => void,
): Promise<SupervisorMessage> {
  const control = controls.get(run) ?? { cancel: null, wake: () => {} };
  const entrypoint = worker.getEntrypoint();
  try {
    const outcome = outcomeOf(entrypoint);
    const cancelled = new Promise<boolean>((resolve) => {
      const raceMayWin = control.cancel;
      if (raceMayWin !== null) resolve(raceMayWin);
      else control.wake = () => resolve(control.cancel === true);
    });
    const first = await Promise.race([outcome, cancelled]);
    if (typeof first !== 'boolean') return first;
    let verdict: RaceVerdict;
    try {
      verdict = await entrypoint.cancel(run, first);
    } catch {
      // The worker cannot answer (it failed to start, or broke): the run's own `done` says why.
      return await outcome;
    }
    return verdict.won ? await outcome : { t: 'cancelled', run, logs: verdict.logs };
  } finally {
    controls.delete(run);
    disposeQuietly(entrypoint);
  }
}
