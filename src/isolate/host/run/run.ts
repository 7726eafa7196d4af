/**
 * One run in one pool member: an execution, or a call of a retained handle. It sends the start
 * message, answers the sandbox's tool calls and fetches on the host, and turns the supervisor's
 * reply into the run's outcome. How the run ends at its bounds (the wall-clock `timeout`, the
 * CPU-time `cpuTimeout`) or when its caller goes away is run-end.ts's `RunEnd`.
 */

import { describeValue } from '../../../protocol/describe-value.js';
import { encodeErrorEnvelope } from '../../../protocol/dispatch.js';
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
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
import { isolateText } from '../../contract/texts.js';
import type { ProcessEnd, SandboxProcess } from '../member/sandbox-process.js';
import { describeExit } from '../member/spawn-workerd.js';
import type { IsolateLimits } from '../options.js';
import { replyFrame } from '../relay/outbound-response.js';
import { RunEnd } from './run-end.js';

export interface RunSpec {
  id: string;
  /** The message that starts the run in the supervisor; its `bound` is `timeout`. */
  start: RunMessage | InvokeMessage;
  timeout: number;
  /** The CPU time the run's process may spend from its start, in ms; `null`: no such bound. */
  cpuTimeout: number | null;
  countHostWaits: boolean;
  dispatch: Dispatch | null | undefined;
  outbound: OutboundFetch | null;
  /** Set on an execution that asked for `retainHandles`: success retains it under `id`. */
  retain: boolean;
  /** The execution id a successful result reports (the retained execution's id), if any. */
  executionId?: string;
  heapLimitMb: number;
  memoryLimitMb: number;
  limits: IsolateLimits;
}

/**
 * What becomes of the process after the run: `keep` it, `retire` it (it may still be running the
 * abandoned code), `kill` it now (wedged), or nothing (`dead`).
 */
export type ProcessFate = 'keep' | 'retire' | 'kill' | 'dead';

export interface RunOutcome {
  result: ExecuteResult;
  fate: ProcessFate;
  /** The execution is now retained in the process, under `spec.id`. */
  retained: boolean;
  /** The CPU time its process spent during the run, in ms, where the platform tells (Linux). */
  cpuMs: number | undefined;
}

type RunState = 'running' | 'cancelling' | 'finished';

/** The engine's own text for a worker that failed to start: `SyntaxError: Unexpected token '}'`. */
function formatFault(fault: string): string {
  const uncaught = /^Failed to start Worker:\s*\n\s*Uncaught (.*)$/m.exec(fault);
  return uncaught ? uncaught[1]!.trim() : fault;
}

function deathText(end: ProcessEnd, spec: RunSpec): string {
  if (end.exit.oomKilled) return isolateText.memoryLimit(spec.memoryLimitMb);
  if (/heap out of memory|Reached heap limit/i.test(end.exit.stderr)) return isolateText.outOfMemory(spec.heapLimitMb);
  return isolateText.processEnded(describeExit(end.exit));
}

/** Answers a message of a run that already settled. */
function answerStale(sandbox: SandboxProcess, message: SupervisorMessage): void {
  if (message.t === 'call')
    sandbox.send({ t: 'answer', ask: message.ask, envelope: encodeErrorEnvelope(COMPLETED_MESSAGE) });
}

export class Run {
  readonly outcome: Promise<RunOutcome>;
  readonly #spec: RunSpec;
  readonly #process: SandboxProcess;
  /** The bounds' clocks, the give-up and the verdict on a late reply. */
  readonly #end: RunEnd;
  #cpuMs: number | undefined;
  #releaseMemoryGuard: (() => void) | undefined;
  #state: RunState = 'running';
  #started = false;
  #resolve!: (outcome: RunOutcome) => void;
  #reject!: (error: unknown) => void;

  constructor(sandbox: SandboxProcess, spec: RunSpec) {
    this.#spec = spec;
    this.#process = sandbox;
    this.#end = new RunEnd(sandbox, spec.id, spec, {
      givingUp: () => {
        this.#state = 'cancelling';
      },
      spinning: () => this.#finish(this.#timedOut([]), 'kill'),
    });
    this.outcome = new Promise<RunOutcome>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  start(): void {
    if (this.#state !== 'running') return;
    this.#started = true;
    this.#process.onMessage = (message) => {
      if (message.run === this.#spec.id && this.#state !== 'finished') this.#receive(message);
      else answerStale(this.#process, message);
    };
    this.#process.watchEnd((end) => this.#processEnded(end));
    this.#process.watchHeap(() => this.#heapFull());
    this.#process.watchOutput(this.#spec.limits.maxProcessOutputBytes, () => this.#outputFlood());
    // Measured before it is sent: workerd closes a socket whose message passes its own limit.
    const text = channelGrammar.encodeHostMessage(this.#spec.start);
    const size = Buffer.byteLength(text, 'utf8');
    const cap = this.#spec.limits.maxRequestBytes;
    if (size > cap) {
      this.#finish({ result: undefined, error: isolateText.requestTooLarge(size, cap), logs: [] }, 'keep');
      return;
    }
    // `bound` arms the sandbox's race (harness.js), which can prove a win the host's clock missed.
    this.#process.sendText(text);
    this.#end.start();
    this.#releaseMemoryGuard = this.#process.armMemoryGuard(this.#spec.memoryLimitMb, () => this.#memoryExceeded());
  }

  /**
   * Its caller went away (`options.signal`): give the run up as at its bound, without waiting on
   * the sandbox's race. The supervisor answers at once unless the process spins, which is killed.
   * The outcome still resolves once the process is settled, so the pool knows its fate.
   */
  cancel(): void {
    if (this.#state === 'finished') return;
    if (!this.#started) {
      this.#finish(this.#timedOut([]), 'keep');
      return;
    }
    this.#end.abandon();
  }

  /** Ends the run with a rejection (the executor is being disposed). */
  abort(error: ExecutorError): void {
    if (this.#state === 'finished') return;
    this.#close();
    this.#reject(error);
  }

  #receive(message: SupervisorMessage): void {
    switch (message.t) {
      case 'call':
        void this.#answerCall(message);
        return;
      case 'done':
        this.#done(message);
        return;
      case 'cancelled':
        if (this.#state === 'cancelling') this.#finish(this.#timedOut(message.logs), 'retire');
        return;
    }
  }

  async #answerCall(message: CallMessage): Promise<void> {
    const dispatch = this.#spec.dispatch;
    const tool = message.tool;
    this.#end.beginHostWait();
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
      this.#end.endHostWait();
    }
    // Checked before anything is sent: the sandbox never receives a result over the cap.
    const size = Buffer.byteLength(envelope, 'utf8');
    const cap = this.#spec.limits.maxToolResultBytes;
    if (size > cap) envelope = encodeErrorEnvelope(isolateText.toolResultTooLarge(tool, size, cap));
    this.#process.send({ t: 'answer', ask: message.ask, envelope });
  }

  /** Answers one relayed sandbox fetch (outbound-server.ts) with the frame to send back. */
  async relayFetch(request: Request): Promise<RelayFrame<RelayReplyHead>> {
    const outbound = this.#spec.outbound;
    if (this.#state === 'finished' || typeof outbound !== 'function')
      return { head: { ok: false, error: COMPLETED_MESSAGE }, body: new Uint8Array() };
    this.#end.beginHostWait();
    try {
      return await replyFrame(await outbound(request), this.#spec.limits.maxResponseBodyBytes);
    } catch (error) {
      return { head: { ok: false, error: messageOf(error) }, body: new Uint8Array() };
    } finally {
      this.#end.endHostWait();
    }
  }

  #done(message: DoneMessage): void {
    const logs = message.logs;
    if (this.#end.doneIsLate(message)) {
      // It ended inside the grace period, after its bound: still a timeout. Anything it
      // retained is released, since no execution id will ever name it.
      if (this.#spec.retain && message.outcome === 'value') this.#process.send({ t: 'release', exec: this.#spec.id });
      this.#finish(this.#timedOut(logs), 'retire');
      return;
    }
    const start = this.#spec.start;
    switch (message.outcome) {
      case 'missing': {
        this.#close();
        const [exec, handle] = start.t === 'invoke' ? [start.exec, start.handle] : [start.run, ''];
        this.#reject(new ExecutorError('HANDLE_NOT_FOUND', isolateText.handleNotFound(exec, handle)));
        return;
      }
      case 'value': {
        let value: unknown;
        try {
          value = decodeValue(message.value);
        } catch (error) {
          // Runs inside the socket's message handler: a throw here would be the host's to die of.
          const text = isolateText.resultUndecodable(messageOf(error));
          this.#finish({ result: undefined, error: text, logs }, 'keep');
          return;
        }
        const result: ExecuteResult = { result: value, logs };
        if (this.#spec.executionId !== undefined) result.executionId = this.#spec.executionId;
        this.#finish(result, 'keep', this.#spec.retain);
        return;
      }
      case 'threw':
        this.#finish({ result: undefined, error: message.error, logs }, 'keep');
        return;
      case 'fault':
        this.#finish({ result: undefined, error: formatFault(message.fault), logs }, 'keep');
        return;
    }
  }

  /** A heap still full after a full collection: out of memory now, not after V8's last attempts. */
  #heapFull(): void {
    if (this.#state === 'finished') return;
    this.#process.kill();
    const error = isolateText.outOfMemory(this.#spec.heapLimitMb);
    this.#finish({ result: undefined, error, logs: [] }, 'dead');
  }

  /** Past `limits.maxProcessOutputBytes` of process output: the process is being killed. */
  #outputFlood(): void {
    this.#killWith(() => isolateText.processOutputTooLarge(this.#spec.limits.maxProcessOutputBytes));
  }

  /** Past `pool.memoryLimitMb`: the guard has ended the process; the run reports the cap. */
  #memoryExceeded(): void {
    this.#killWith(() => isolateText.memoryLimit(this.#spec.memoryLimitMb));
  }

  /** The pool is ending its process over `pool.memoryBudgetMb`: the run reports that, not a death. */
  endOverBudget(error: string): void {
    this.#killWith(() => error);
  }

  /** Ends the process of a run a bound ended, and reports the bound's text rather than a death. */
  #killWith(text: () => string): void {
    if (this.#state === 'finished') return;
    this.#process.kill();
    this.#finish({ result: undefined, error: text(), logs: [] }, 'dead');
  }

  #processEnded(end: ProcessEnd): void {
    if (this.#state === 'finished') return;
    const result: ExecuteResult =
      this.#state === 'cancelling'
        ? this.#timedOut([])
        : { result: undefined, error: deathText(end, this.#spec), logs: [] };
    this.#finish(result, 'dead');
  }

  #timedOut(logs: LogEntry[]): ExecuteResult {
    return { result: undefined, error: this.#end.timeoutText(), logs };
  }

  /** The run is over: its state, and every clock and guard it held. */
  #close(): void {
    this.#state = 'finished';
    // Read before the process may be killed; a process that already died reads as unknown.
    const cpuMs = this.#end.stop();
    this.#cpuMs = this.#started ? cpuMs : undefined;
    this.#releaseMemoryGuard?.();
  }

  #finish(result: ExecuteResult, fate: ProcessFate, retained = false): void {
    if (this.#state === 'finished') return;
    this.#close();
    this.#resolve({ result, fate, retained, cpuMs: this.#cpuMs });
  }
}
