/**
 * How a run ends, the host's one state machine (the sandbox's half is workerd/run-race.ts; the state
 * diagram is in docs/isolate.md). Every ending of a run is an event here: its bounds, its caller
 * going away (while it waits for a process too), the pool giving it none, the sandbox's answers, a
 * process that does not answer the give-up, the caps that end a process, its death, and the
 * executor's disposal. The table says, for each state and event, the next state and the verdict:
 * what the run does, and what becomes of its process. It is pure: the run (run.ts) feeds it the
 * events and carries out its verdicts, filling the result's data (protocol/run-endings.ts's
 * `RunEnding`) from its bounds and composing its text once, the clocks and the give-up's grace are
 * run-clocks.ts's, and what the pool does with the process is pool/after-run.ts's.
 *
 * An event that a state does not list is refused: the state stays and nothing is done. So the
 * first ending wins, and a reply that comes after it changes nothing.
 */
import type { RunEndingCode } from '../../../protocol/run-endings.js';

/** Where a run is on its way to its end. */
export type EndingState =
  /** Made with its call, not yet handed to a process: it may be waiting in the pool's queue for one. */
  | 'unstarted'
  /** Handed to its process: its start message is sent, its clocks run. */
  | 'running'
  /** Given up at its wall-clock bound (`cancel` sent): the sandbox's race may still prove a win. */
  | 'givingUpAtTimeout'
  /** Given up past its CPU-time bound: no race wins, the CPU time was spent. */
  | 'givingUpAtCpu'
  /**
   * Given up because its caller went away (`options.signal`): the caller is answered already, with
   * its cancellation, and whatever the run still produces is lost.
   */
  | 'givingUpAbandoned'
  /** Over: its outcome is settled. */
  | 'ended';

/** What happens to a run. */
export type EndingEvent =
  /** It is handed to its process. */
  | 'start'
  /** The pool gave it no process: its queue was full, the nested runs at their cap, or no process could start. */
  | 'unserved'
  /** Its start message is over `limits.maxRequestBytes`, so it is never sent. */
  | 'requestTooLarge'
  /** Its wall-clock bound (`timeout`) is spent. */
  | 'timeout'
  /** Its program did not start within `pool.programStartTimeoutMs` of its hand-off. */
  | 'programStart'
  /** Its CPU-time bound (`cpuTimeout`) is spent. */
  | 'cpu'
  /** Its caller went away (`options.signal`). */
  | 'cancel'
  /** The sandbox's outcome (`done`), settled before its race was lost (`settledBeforeDeadline`). */
  | 'doneInTime'
  /** The sandbox's outcome (`done`), settled after its race was lost. */
  | 'doneAfterDeadline'
  /** The sandbox answered the give-up with `cancelled`: its race is lost. */
  | 'cancelled'
  /** Its process did not answer the give-up within its grace: it spins. */
  | 'spinning'
  /** An isolate's heap is still full after a full collection (`pool.heapLimitMb`). */
  | 'heap'
  /** Its process passed `pool.memoryLimitMb`. */
  | 'memory'
  /** Its process wrote more than `limits.maxProcessOutputBytes`. */
  | 'output'
  /** The pool ends its process over `pool.memoryBudgetMb`. */
  | 'budget'
  /** The pool ends its process because its tenant holds more than its share of the budget. */
  | 'reclaim'
  /** Its process ended by itself (its exit, or a signal from outside). */
  | 'died'
  /** The kernel ended its process for passing its cgroup's `memory.max` (`pool.memoryLimitMb`). */
  | 'diedAtMemoryLimit'
  /** V8 aborted its process: an isolate's heap was exhausted (`pool.heapLimitMb`). */
  | 'diedOutOfHeap'
  /** The executor is being disposed. */
  | 'dispose';

/** What becomes of the run's process; pool/after-run.ts says what the pool then does with it. */
export type ProcessFate =
  /** It answered: it may serve again. */
  | 'keep'
  /** It may still be running the abandoned code: it ends, once it holds no retained execution. */
  | 'retire'
  /** It did not answer the give-up (it spins): it is killed as the run hands it back. */
  | 'kill'
  /** It passed a cap: the run kills it at once, and the pool sees it end. */
  | 'killed'
  /** It ended by itself. */
  | 'dead';

/**
 * What the run's result says: the sandbox's own outcome, the code of the ending the executor
 * imposed (`RunEnding`; a bound's carries the lines the answer brought), or no result.
 */
export type EndingResult =
  /** The sandbox's own outcome: a value, a throw, a fault, or a handle not found. */
  | 'outcome'
  | RunEndingCode
  /** No result: the run is rejected, its caller went away (`options.signal`). */
  | 'EXECUTION_CANCELLED'
  /** No result: the run is rejected, the executor is disposed. */
  | 'disposed'
  /** No result: the run is rejected with why the pool gave it no process. */
  | 'unserved';

/** What the run does on an event. */
export type EndingVerdict =
  /** Nothing (a refused event, or one that only changes the state). */
  | { do: 'nothing' }
  /** Hand the run to its process: send its start message, arm its clocks and guards. */
  | { do: 'start' }
  /** Ask the supervisor to give the run up (`cancel`), and watch the grace it is given to answer. */
  | { do: 'giveUp'; raceMayWin: boolean }
  /**
   * Its caller went away: answer it now with its cancellation, while the process is still settled
   * as the table goes on to say, and give the run up unless it is given up already (`giveUp`).
   */
  | { do: 'abandon'; giveUp: boolean }
  /** The run is over: its result, and what becomes of its process. */
  | { do: 'settle'; result: EndingResult; process: ProcessFate };

/** One transition: the state after the event, and the verdict. */
export interface EndingStep {
  to: EndingState;
  verdict: EndingVerdict;
}

const ended = (result: EndingResult, process: ProcessFate): EndingStep => ({
  to: 'ended',
  verdict: { do: 'settle', result, process },
});

const givingUp = (to: EndingState, raceMayWin: boolean): EndingStep => ({
  to,
  verdict: { do: 'giveUp', raceMayWin },
});

/** Its caller went away: answered at once, and given up (with no race to win) unless it is already. */
const abandoned = (giveUp: boolean): EndingStep => ({ to: 'givingUpAbandoned', verdict: { do: 'abandon', giveUp } });

/** A cap ends the process whatever the run was doing, and the run reports the cap, not a death. */
const caps = {
  heap: ended('OUT_OF_MEMORY', 'killed'),
  memory: ended('MEMORY_LIMIT', 'killed'),
  output: ended('OUTPUT_TOO_LARGE', 'killed'),
  budget: ended('MEMORY_BUDGET', 'killed'),
  reclaim: ended('TENANT_SHARE_RECLAIMED', 'killed'),
} as const;

/** A death once the run is given up is reported as what it was given up for, whatever its cause. */
const deathsAt = (result: EndingResult) =>
  ({
    died: ended(result, 'dead'),
    diedAtMemoryLimit: ended(result, 'dead'),
    diedOutOfHeap: ended(result, 'dead'),
  }) as const;

/**
 * The table. Being given up, a run answers with its bound's text: the supervisor's `cancelled`
 * (the race lost) and a late `done` leave the process running the abandoned code, so it is retired;
 * one that spins through its grace is killed; one that dies is reported as the bound, not a death.
 * A run whose caller went away is that caller's cancellation, whatever bound it was given up at.
 */
const ENDINGS: Readonly<Record<EndingState, Readonly<Partial<Record<EndingEvent, EndingStep>>>>> = {
  unstarted: {
    start: { to: 'running', verdict: { do: 'start' } },
    unserved: ended('unserved', 'keep'),
    // Waiting for a process, or handed one it has not started on: the caller is answered, and the
    // run's place in the queue given up (Run.withdrawn) or its process kept.
    cancel: ended('EXECUTION_CANCELLED', 'keep'),
    budget: caps.budget,
    reclaim: caps.reclaim,
    dispose: ended('disposed', 'keep'),
  },
  running: {
    requestTooLarge: ended('REQUEST_TOO_LARGE', 'keep'),
    // Its program never started: the process is overloaded, or a module's top level runs on.
    programStart: ended('PROGRAM_START_TIMEOUT', 'killed'),
    // At the wall-clock bound the sandbox's race may still prove a win; past the CPU bound, or
    // for a caller that went away, never.
    timeout: givingUp('givingUpAtTimeout', true),
    cpu: givingUp('givingUpAtCpu', false),
    cancel: abandoned(true),
    doneInTime: ended('outcome', 'keep'),
    doneAfterDeadline: ended('outcome', 'keep'),
    ...caps,
    // A death is the cap that caused it where the process tells, else its exit.
    died: ended('PROCESS_ENDED', 'dead'),
    diedAtMemoryLimit: ended('MEMORY_LIMIT', 'dead'),
    diedOutOfHeap: ended('OUT_OF_MEMORY', 'dead'),
    dispose: ended('disposed', 'keep'),
  },
  givingUpAtTimeout: {
    // The caller went away too: no win counts any more, and `cancel` is already sent.
    cancel: abandoned(false),
    // The race proves the run ended within its bound, counted from after its synchronous prefix
    // (as upstream counts), though the host's clock, started at the program's start, ran out.
    doneInTime: ended('outcome', 'keep'),
    doneAfterDeadline: ended('EXECUTION_TIMEOUT', 'retire'),
    cancelled: ended('EXECUTION_TIMEOUT', 'retire'),
    spinning: ended('EXECUTION_TIMEOUT', 'kill'),
    ...caps,
    ...deathsAt('EXECUTION_TIMEOUT'),
    dispose: ended('disposed', 'keep'),
  },
  givingUpAtCpu: {
    cancel: abandoned(false),
    doneInTime: ended('CPU_TIMEOUT', 'retire'),
    doneAfterDeadline: ended('CPU_TIMEOUT', 'retire'),
    cancelled: ended('CPU_TIMEOUT', 'retire'),
    spinning: ended('CPU_TIMEOUT', 'kill'),
    ...caps,
    ...deathsAt('CPU_TIMEOUT'),
    dispose: ended('disposed', 'keep'),
  },
  givingUpAbandoned: {
    doneInTime: ended('EXECUTION_CANCELLED', 'retire'),
    doneAfterDeadline: ended('EXECUTION_CANCELLED', 'retire'),
    cancelled: ended('EXECUTION_CANCELLED', 'retire'),
    spinning: ended('EXECUTION_CANCELLED', 'kill'),
    ...caps,
    ...deathsAt('EXECUTION_CANCELLED'),
    dispose: ended('disposed', 'keep'),
  },
  ended: {},
};

/** The transition from `state` on `event`; a refused event leaves the state as it is, and does nothing. */
export function stepEnding(state: EndingState, event: EndingEvent): EndingStep {
  return ENDINGS[state][event] ?? { to: state, verdict: { do: 'nothing' } };
}
