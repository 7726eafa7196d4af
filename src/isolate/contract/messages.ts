/**
 * The messages of the channel between the host and a pool member's supervisor, by direction.
 * Types only: the grammar that frames and parses them is channel.ts, and both sides' code (the
 * host's run and process, the worker's supervisor) build and read them, so a change to one is a
 * type error on the other side.
 */
import type { LogEntry, LogLevel, ModuleSource } from '../../protocol/types.js';

// ---- host to supervisor ------------------------------------------------------------------------

/** Load a fresh dynamic worker and run the entry's arrow in it. */
export interface RunMessage {
  t: 'run';
  run: string;
  /** The generated entry module (entry-module.ts). */
  entry: string;
  modules: Record<string, ModuleSource>;
  /** Whether the worker's fetches reach the host (otherwise they are blocked). */
  outbound: boolean;
  /** Keep the worker loaded after a success, for `invoke`. */
  retain: boolean;
  /** The run's timeout in ms: it arms the sandbox's race (harness.js). */
  bound: number;
  /** Send each console line as it is captured (`line`), for a caller watching the run's events. */
  live?: boolean;
}

/** Call a function a retained execution returned. */
export interface InvokeMessage {
  t: 'invoke';
  run: string;
  /** The retained execution's id (the id of the run that loaded its worker). */
  exec: string;
  handle: string;
  /** The argument array, in the value codec's encoded form. */
  args: unknown;
  bound: number;
  /** As on `RunMessage`. */
  live?: boolean;
}

/** The host gave the run up. */
export interface CancelMessage {
  t: 'cancel';
  run: string;
  /**
   * It gave up at the wall-clock bound, so the sandbox's race may still prove the run won; false
   * when the CPU bound was spent or its caller went away, where nothing can.
   */
  raceMayWin: boolean;
}

/** Unload a retained execution's worker. */
interface ReleaseMessage {
  t: 'release';
  exec: string;
}

/** The envelope answering a `call`. */
interface AnswerMessage {
  t: 'answer';
  ask: number;
  envelope: string;
}

export type HostMessage = RunMessage | InvokeMessage | CancelMessage | ReleaseMessage | AnswerMessage;

// ---- supervisor to host ------------------------------------------------------------------------

/** A tool call of the run: the host answers with an `answer` carrying the same `ask`. */
export interface CallMessage {
  t: 'call';
  run: string;
  ask: number;
  provider: string;
  tool: string;
  /** The argument array, in the protocol's binary codec. */
  args: string;
}

/** A console line of a run that asked for them live; the `done` still carries every line. */
interface LineMessage {
  t: 'line';
  run: string;
  /** Its place among the run's lines. */
  index: number;
  level: LogLevel;
  message: string;
}

export interface DoneBase {
  t: 'done';
  run: string;
  logs: LogEntry[];
  /** The run settled before its deadline, by the sandbox's race (its clock, not the host's). */
  settledBeforeDeadline: boolean;
}

/** The arrow (or the invoked function) settled with a value, in the value codec's encoded form. */
interface DoneValue extends DoneBase {
  outcome: 'value';
  value: unknown;
}

/** It threw (or rejected): the thrown value's text (harness.js `describeThrown`). */
interface DoneThrew extends DoneBase {
  outcome: 'threw';
  error: string;
}

/** The runtime failed it: the worker did not start, or its value could not be serialized. */
interface DoneFault extends DoneBase {
  outcome: 'fault';
  fault: string;
}

/** An `invoke` named a retained execution or a handle the supervisor does not hold. */
interface DoneMissing extends DoneBase {
  outcome: 'missing';
}

export type DoneMessage = DoneValue | DoneThrew | DoneFault | DoneMissing;

/** The answer to a `cancel` of a run that lost its race, with the lines it logged. */
interface CancelledMessage {
  t: 'cancelled';
  run: string;
  logs: LogEntry[];
}

/**
 * The run's program has started: its worker is loaded and the harness's `begin` ran. The host's
 * clock of the run's `timeout` starts here, as upstream's starts inside the sandbox.
 */
interface StartedMessage {
  t: 'started';
  run: string;
}

export type SupervisorMessage = CallMessage | LineMessage | DoneMessage | CancelledMessage | StartedMessage;
