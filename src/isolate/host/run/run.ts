/**
 * One run in one pool member: an execution, or a call of a retained handle. It sends the start
 * message, answers the sandbox's tool calls and fetches on the host, and turns the supervisor's
 * reply into the run's outcome. Every way it ends (its bounds, its caller going away, the sandbox's
 * answers, the caps on its process, its process's death, the executor's disposal) is an event of
 * one state machine, run-ending.ts, whose verdicts the run carries out here; its clocks are
 * run-clocks.ts's `RunClocks`.
 */

import { describeValue } from '../../../protocol/describe-value.js';
import { encodeErrorEnvelope } from '../../../protocol/dispatch.js';
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import type { RunEnding } from '../../../protocol/run-endings.js';
import { COMPLETED_MESSAGE, formatToolNotFound } from '../../../protocol/texts.js';
import type { Dispatch, ExecuteResult, LogEntry, OutboundFetch } from '../../../protocol/types.js';
import { decodeValue } from '../../../protocol/value-codec.js';
import { channelGrammar } from '../../contract/channel.js';
import type {
  CallMessage,
  DoneMessage,
  InvokeMessage,
  RunMessage,
  SupervisorMessage,
} from '../../contract/messages.js';
import type { RelayFrame, RelayReplyHead } from '../../contract/relay-frame.js';
import { isolateText } from '../../host/texts.js';
import type { MemberProcess, ProcessEnd } from '../member/member-process.js';
import type { ExitInfo } from '../member/spawn-workerd.js';
import type { IsolateLimits } from '../options.js';
import { replyFrame } from '../relay/outbound-response.js';
import { endingText } from './ending-text.js';
import { RunClocks } from './run-clocks.js';
import {
  type EndingEvent,
  type EndingResult,
  type EndingState,
  type EndingVerdict,
  type ProcessFate,
  stepEnding,
} from './run-ending.js';

/**
 * CPU time a process must have spent over one period of its start bound to be given another: two
 * clock ticks, more than a stopped or wedged process spends, less than loading a worker takes.
 */
const START_PROGRESS_CPU_MS = 20;

export interface RunSpec {
  id: string;
  /** The message that starts the run in the supervisor; its `bound` is `timeout`. */
  start: RunMessage | InvokeMessage;
  timeout: number;
  /** The CPU time the run's process may spend from its start, in ms; `null`: no such bound. */
  cpuTimeout: number | null;
  countHostWaits: boolean;
  /** The CPU time a turn still running at the wall-clock bound may spend to finish, in ms. */
  turnGraceMs: number;
  dispatch: Dispatch | null | undefined;
  outbound: OutboundFetch | null;
  /** Set on an execution that asked for `retainHandles`: success retains it under `id`. */
  retain: boolean;
  /** The execution id a successful result reports (the retained execution's id), if any. */
  executionId?: string;
  heapLimitMb: number;
  memoryLimitMb: number;
  limits: IsolateLimits;
  /** How long an execution's program may take to start after hand-off (`pool.programStartTimeoutMs`). */
  programStartTimeoutMs: number;
  /** Takes each console line as the sandbox captures it, when the start message asked for them (`live`). */
  onLine?: (entry: LogEntry, index: number) => void;
}

export interface RunOutcome {
  result: ExecuteResult;
  /** The execution is now retained in the process, under `spec.id`. */
  retained: boolean;
  /** The CPU time its process spent during the run, in ms, where the platform tells (Linux). */
  cpuMs: number | undefined;
}

/** What an ending event brings to the run's result. */
interface EndingDetails {
  /** The lines the sandbox's answer carried. */
  logs?: LogEntry[];
  /** The sandbox's `done`. */
  done?: DoneMessage;
  /** The size of a start message over its cap. */
  requestBytes?: number;
  /** The pool's account of the memory budget it ended the process over. */
  budget?: AccountOf<'MEMORY_BUDGET'>;
  /** The pool's account of the tenant's share it ended the process over. */
  share?: AccountOf<'TENANT_SHARE_RECLAIMED'>;
  /** How its process ended. */
  exit?: ExitInfo;
  /** The rejection of a disposed run. */
  disposed?: ExecutorError;
  /** The rejection of a run whose caller went away. */
  cancelled?: ExecutorError;
  /** Why the pool gave the run no process (its queue full, the nested runs at their cap, a failed start). */
  unserved?: unknown;
}

/** How a run settles: its outcome, or the rejection its caller gets instead. */
type Settled = Omit<RunOutcome, 'cpuMs'> | { rejection: unknown };

/** The engine's own text for a worker that failed to start: `SyntaxError: Unexpected token '}'`. */
function formatFault(fault: string): string {
  const uncaught = /^Failed to start Worker:\s*\n\s*Uncaught (.*)$/m.exec(fault);
  return uncaught ? uncaught[1]!.trim() : fault;
}

/** What an ending names besides its code. */
type AccountOf<C extends RunEnding['code']> = Omit<Extract<RunEnding, { code: C }>, 'code'>;

/** The event a process's end is, by the cause it tells (spawn-workerd.ts's `ExitInfo`). */
function deathEvent({ exit }: ProcessEnd): EndingEvent {
  if (exit.oomKilled) return 'diedAtMemoryLimit';
  if (exit.heapExhausted) return 'diedOutOfHeap';
  return 'died';
}

/** Answers a message of a run that already settled. */
function answerStale(member: MemberProcess, message: SupervisorMessage): void {
  if (message.t === 'call')
    member.send({ t: 'answer', ask: message.ask, envelope: encodeErrorEnvelope(COMPLETED_MESSAGE) });
}

/**
 * A run is made when its call is, before it has a process: while it waits for one its caller may
 * go away, or the pool may give it none, and the table decides either as it decides every other
 * ending. `start` hands it its process.
 */
export class Run {
  /**
   * Once the run is over (its process settled, as the table says): its result, or its rejection
   * (disposed, a handle not found, its caller gone). The pool's bookkeeping waits on this.
   */
  readonly outcome: Promise<RunOutcome>;
  /**
   * What its caller is answered: the outcome's result or rejection, or, as soon as the caller goes
   * away (`cancel`), its cancellation, while the process is still being settled.
   */
  readonly answer: Promise<ExecuteResult>;
  /**
   * Aborted, with the run's rejection, when the run is over before it was handed a process: what
   * still waits on its behalf (its place in the pool's queue) gives up.
   */
  readonly withdrawn: AbortSignal;
  readonly #withdraw = new AbortController();
  readonly #spec: RunSpec;
  /** Its process, from `start` on. */
  #process: MemberProcess | undefined;
  /** The bounds' clocks and the give-up's grace, from the hand-off on. */
  #clocks: RunClocks | undefined;
  #cpuMs: number | undefined;
  #releaseMemoryGuard: (() => void) | undefined;
  /** What it listens to on its process (member-process.ts), let go once it is over. */
  readonly #unwatch: (() => void)[] = [];
  /** Where the run is on its way to its end; only `#on` moves it, by run-ending.ts's table. */
  #ending: EndingState = 'unstarted';
  #fate: ProcessFate = 'keep';
  /** An execution's bound of its program's start, until the program reports it started. */
  #programStart: NodeJS.Timeout | undefined;
  /** The process's CPU time at the last reading of the start bound (0 at hand-off). */
  #cpuAtStartCheck = 0;
  #resolve!: (outcome: RunOutcome) => void;
  #reject!: (error: unknown) => void;
  #rejectAnswer!: (error: unknown) => void;
  /** The caller's cancellation, once it went away. */
  #cancellation: ExecutorError | undefined;
  #started = false;

  constructor(spec: RunSpec) {
    this.#spec = spec;
    this.withdrawn = this.#withdraw.signal;
    this.outcome = new Promise<RunOutcome>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.answer = new Promise<ExecuteResult>((resolve, reject) => {
      this.#rejectAnswer = reject;
      this.outcome.then((outcome) => resolve(outcome.result), reject);
    });
    // A caller that went away listens to neither.
    this.outcome.catch(() => undefined);
    this.answer.catch(() => undefined);
  }

  /** Whether it was handed to its process (its start message sent or refused over its cap). */
  get started(): boolean {
    return this.#started;
  }

  /** The CPU time its process spent during the run, in ms, once it is over, where the platform tells. */
  get cpuMs(): number | undefined {
    return this.#cpuMs;
  }

  /**
   * What becomes of its process, by the verdict that ended the run (`keep` until then, and for a
   * run that never started).
   */
  get fate(): ProcessFate {
    return this.#fate;
  }

  /** Hands the run to its process, unless it is over already (its caller went away while it waited). */
  start(process: MemberProcess): void {
    this.#process = process;
    this.#on('start');
  }

  /** The pool gave it no process: the run is rejected with the pool's reason. */
  unserved(reason: unknown): void {
    this.#on('unserved', { unserved: reason });
  }

  /**
   * Its caller went away (`options.signal`): the table answers it with `cancellation` at once, and
   * gives the run up without waiting on the sandbox's race. The supervisor answers at once unless
   * the process spins, which is killed. The outcome settles once the process is, so the pool knows
   * its fate.
   */
  cancel(cancellation: ExecutorError): void {
    this.#on('cancel', { cancelled: cancellation });
  }

  /** Ends the run with a rejection (the executor is being disposed). */
  abort(error: ExecutorError): void {
    this.#on('dispose', { disposed: error });
  }

  /** The pool is ending its process over `pool.memoryBudgetMb`: the run reports that, not a death. */
  endOverBudget(account: AccountOf<'MEMORY_BUDGET'>): void {
    this.#on('budget', { budget: account });
  }

  /** The pool is ending its process for another tenant's run: the run reports that, not a death. */
  endForTenantShare(account: AccountOf<'TENANT_SHARE_RECLAIMED'>): void {
    this.#on('reclaim', { share: account });
  }

  /** Steps the run's ending by one event (run-ending.ts), and carries out the verdict. */
  #on(event: EndingEvent, details: EndingDetails = {}): void {
    const { to, verdict } = stepEnding(this.#ending, event);
    this.#ending = to;
    if (verdict.do !== 'nothing' && details.cancelled !== undefined) this.#cancellation = details.cancelled;
    switch (verdict.do) {
      case 'nothing':
        return;
      case 'start':
        this.#begin();
        return;
      case 'giveUp':
        this.#clocks?.giveUp(verdict.raceMayWin);
        return;
      case 'abandon':
        if (verdict.giveUp) this.#clocks?.giveUp(false);
        this.#rejectAnswer(this.#cancellation);
        return;
      case 'settle':
        this.#settle(verdict, details);
        return;
    }
  }

  /** Hands the run to its process: wires its events, sends the start message, arms the clocks. */
  #begin(): void {
    this.#started = true;
    const process = this.#process!;
    this.#clocks = new RunClocks(process, this.#spec.id, this.#spec, {
      expired: (bound) => this.#on(bound),
      spinning: () => this.#on('spinning'),
    });
    // A message of a settled run is answered as stale: its run no longer listens.
    process.onStale = (message) => answerStale(process, message);
    this.#unwatch.push(
      process.route(this.#spec.id, (message) => {
        if (this.#ending !== 'ended') this.#receive(message);
        else answerStale(process, message);
      }),
      process.watchEnd((end) => this.#on(deathEvent(end), { exit: end.exit })),
      process.watchHeap(() => this.#on('heap')),
      process.watchOutput(this.#spec.limits.maxProcessOutputBytes, () => this.#on('output')),
    );
    // Measured before it is sent: workerd closes a socket whose message passes its own limit.
    const start = this.#spec.start;
    const frame = start.t === 'run' ? channelGrammar.encodeRunFrame(start) : channelGrammar.encodeHostMessage(start);
    const size = typeof frame === 'string' ? Buffer.byteLength(frame, 'utf8') : frame.byteLength;
    const cap = this.#spec.limits.maxRequestBytes;
    if (size > cap) {
      this.#on('requestTooLarge', { requestBytes: size });
      return;
    }
    // `bound` arms the sandbox's race (harness.js), which can prove a win the host's clock missed.
    process.sendFrame(frame);
    if (this.#spec.start.t === 'run') {
      // An execution's clock starts with its program (its `started`), as upstream's starts inside
      // the sandbox: until then it counts only its process's CPU time, and the start has a bound
      // of its own. An invocation's worker is loaded already.
      this.#clocks.startLoading();
      this.#armProgramStart();
    } else this.#clocks.start();
    this.#releaseMemoryGuard = process.armMemoryGuard(this.#spec.memoryLimitMb, () => this.#on('memory'));
  }

  #receive(message: SupervisorMessage): void {
    // Any message of the run shows its program started, should its `started` not have come first.
    this.#programStarted();
    switch (message.t) {
      case 'call':
        void this.#answerCall(message);
        return;
      case 'line':
        this.#spec.onLine?.({ level: message.level, message: message.message }, message.index);
        return;
      case 'done':
        this.#on(message.settledBeforeDeadline ? 'doneInTime' : 'doneAfterDeadline', {
          done: message,
          logs: message.logs,
        });
        return;
      case 'cancelled':
        this.#on('cancelled', { logs: message.logs });
        return;
      case 'started':
        return;
    }
  }

  /**
   * The start bound ends a process held off its cores or wedged, which computes nothing. One that
   * computes (loading the run's worker on a slow share of a core, a module's top level, a first
   * turn that spins before its `started` could be sent) is given another period: until its program
   * starts, its run clock counts that CPU time against `timeout`, and ends it with its own text.
   */
  #armProgramStart(): void {
    this.#programStart = setTimeout(() => {
      const used = this.#clocks?.cpuUsed();
      if (used !== undefined && used - this.#cpuAtStartCheck >= START_PROGRESS_CPU_MS) {
        this.#cpuAtStartCheck = used;
        this.#armProgramStart();
      } else this.#on('programStart');
    }, this.#spec.programStartTimeoutMs);
  }

  /** The program has started: the clock of its `timeout` runs from now. */
  #programStarted(): void {
    if (this.#programStart === undefined) return;
    clearTimeout(this.#programStart);
    this.#programStart = undefined;
    this.#clocks?.programStarted();
  }

  async #answerCall(message: CallMessage): Promise<void> {
    const dispatch = this.#spec.dispatch;
    const tool = message.tool;
    this.#clocks?.beginHostWait();
    let envelope: string;
    try {
      if (typeof dispatch !== 'function') envelope = encodeErrorEnvelope(formatToolNotFound(tool));
      else {
        const answer: unknown = await dispatch(message.provider, tool, message.args);
        envelope =
          typeof answer === 'string'
            ? answer
            : encodeErrorEnvelope(isolateText.dispatchNotEnvelope(describeValue(answer)));
      }
    } catch (error) {
      envelope = encodeErrorEnvelope(messageOf(error));
    } finally {
      this.#clocks?.endHostWait();
    }
    // Checked before anything is sent: the sandbox never receives a result over the cap.
    const size = Buffer.byteLength(envelope, 'utf8');
    const cap = this.#spec.limits.maxToolResultBytes;
    if (size > cap) envelope = encodeErrorEnvelope(isolateText.toolResultTooLarge(tool, size, cap));
    this.#process?.send({ t: 'answer', ask: message.ask, envelope });
  }

  /** Answers one relayed sandbox fetch (outbound-server.ts) with the frame to send back. */
  async relayFetch(request: Request): Promise<RelayFrame<RelayReplyHead>> {
    const outbound = this.#spec.outbound;
    if (this.#ending === 'ended' || typeof outbound !== 'function')
      return { head: { ok: false, error: COMPLETED_MESSAGE }, body: new Uint8Array() };
    this.#clocks?.beginHostWait();
    try {
      return await replyFrame(await outbound(request), this.#spec.limits.maxResponseBodyBytes);
    } catch (error) {
      return { head: { ok: false, error: messageOf(error) }, body: new Uint8Array() };
    } finally {
      this.#clocks?.endHostWait();
    }
  }

  /** The run is over, as the verdict says: its result, and its process's fate. */
  #settle({ result, process }: Extract<EndingVerdict, { do: 'settle' }>, details: EndingDetails): void {
    const done = details.done;
    if (result !== 'outcome' && done !== undefined && this.#spec.retain && done.outcome === 'value') {
      // It ended inside the grace period, after its bound: still a timeout. Anything it
      // retained is released, since no execution id will ever name it.
      this.#process?.send({ t: 'release', exec: this.#spec.id });
    }
    const settled = result === 'outcome' ? this.#outcomeOf(done!) : this.#failure(result, details);
    // A cap: its process ends now, not when the pool has it back.
    if (process === 'killed') this.#process?.kill();
    this.#close(process);
    const rejection = 'rejection' in settled ? settled.rejection : undefined;
    if (!this.#started) this.#withdraw.abort(rejection);
    if ('rejection' in settled) this.#reject(rejection);
    else this.#resolve({ ...settled, cpuMs: this.#cpuMs });
  }

  /** The sandbox's own outcome: a result, or a rejection (its handle is not found). */
  #outcomeOf(message: DoneMessage): Settled {
    const logs = message.logs;
    const start = this.#spec.start;
    switch (message.outcome) {
      case 'missing': {
        const [exec, handle] = start.t === 'invoke' ? [start.exec, start.handle] : [start.run, ''];
        return { rejection: new ExecutorError('HANDLE_NOT_FOUND', isolateText.handleNotFound(exec, handle)) };
      }
      case 'value': {
        let value: unknown;
        try {
          value = decodeValue(message.value);
        } catch (error) {
          // Runs inside the socket's message handler: a throw here would be the host's to die of.
          const text = isolateText.resultUndecodable(messageOf(error));
          return { result: { result: undefined, error: text, logs }, retained: false };
        }
        const result: ExecuteResult = { result: value, logs };
        if (this.#spec.executionId !== undefined) result.executionId = this.#spec.executionId;
        return { result, retained: this.#spec.retain };
      }
      case 'threw':
        return { result: { result: undefined, error: message.error, logs }, retained: false };
      case 'fault':
        return { result: { result: undefined, error: formatFault(message.fault), logs }, retained: false };
    }
  }

  /**
   * A run that did not end with its own outcome: the ending the table chose, with its data, and its
   * text (composed once, ending-text.ts), or its rejection.
   */
  #failure(result: Exclude<EndingResult, 'outcome'>, details: EndingDetails): Settled {
    if (result === 'disposed') return { rejection: details.disposed };
    if (result === 'EXECUTION_CANCELLED') return { rejection: this.#cancellation };
    if (result === 'unserved') return { rejection: details.unserved };
    const ending = this.#endingOf(result, details);
    // A bound's text comes with the lines the sandbox's answer brought; a cap's with none.
    const logs = ending.code === 'EXECUTION_TIMEOUT' || ending.code === 'CPU_TIMEOUT' ? (details.logs ?? []) : [];
    return { result: { result: undefined, error: endingText(ending), logs, ending }, retained: false };
  }

  /** The ending the table chose, with what it names: the run's bounds, or what the event brought. */
  #endingOf(
    code: Exclude<EndingResult, 'outcome' | 'disposed' | 'EXECUTION_CANCELLED' | 'unserved'>,
    details: EndingDetails,
  ): RunEnding {
    const spec = this.#spec;
    switch (code) {
      case 'EXECUTION_TIMEOUT':
        return { code, timeout: spec.timeout };
      case 'CPU_TIMEOUT':
        // Only a run with a CPU bound spends one; without, it is its wall-clock bound.
        return spec.cpuTimeout === null
          ? { code: 'EXECUTION_TIMEOUT', timeout: spec.timeout }
          : { code, cpuTimeout: spec.cpuTimeout };
      case 'PROGRAM_START_TIMEOUT':
        return { code, programStartTimeoutMs: spec.programStartTimeoutMs };
      case 'REQUEST_TOO_LARGE':
        return { code, bytes: details.requestBytes!, maxRequestBytes: spec.limits.maxRequestBytes };
      case 'OUT_OF_MEMORY':
        return { code, heapLimitMb: spec.heapLimitMb };
      case 'MEMORY_LIMIT':
        return { code, memoryLimitMb: spec.memoryLimitMb };
      case 'OUTPUT_TOO_LARGE':
        return { code, maxProcessOutputBytes: spec.limits.maxProcessOutputBytes };
      case 'MEMORY_BUDGET':
        return { code, ...details.budget! };
      case 'TENANT_SHARE_RECLAIMED':
        return { code, ...details.share! };
      case 'PROCESS_ENDED':
        return { code, exitCode: details.exit!.code, signal: details.exit!.signal };
    }
  }

  /** The run is over: its process's fate, and every clock and guard it held. */
  #close(fate: ProcessFate): void {
    this.#fate = fate;
    // Read before the process may be killed; a process that already died, or a run that never
    // started, reads as unknown.
    clearTimeout(this.#programStart);
    this.#programStart = undefined;
    this.#cpuMs = this.#clocks?.stop();
    this.#releaseMemoryGuard?.();
    for (const unwatch of this.#unwatch.splice(0)) unwatch();
  }
}
