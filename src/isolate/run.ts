/**
 * One run in one pool member: an execution, or a call of a retained handle. It sends the start
 * message, answers the sandbox's tool calls and fetches on the host, keeps the run clock, and
 * enforces the bounds, the wall-clock `timeout` and the CPU-time `cpuTimeout`: when one is spent
 * it asks the supervisor to give the run up and, when the process does not answer (a synchronous
 * spin holds its only JavaScript thread), kills it.
 */

import { describeValue } from '../protocol/describe-value.js';
import { encodeErrorEnvelope } from '../protocol/dispatch.js';
import { ExecutionTimeoutError, ExecutorError, messageOf } from '../protocol/errors.js';
import { COMPLETED_MESSAGE, formatCpuTimeout, formatToolNotFound } from '../protocol/texts.js';
import type { Dispatch, ExecuteResult, LogEntry, OutboundFetch } from '../protocol/types.js';
import { decodeValue } from '../protocol/value-codec.js';
import type { CallMessage, DoneMessage, InvokeMessage, RunMessage, SupervisorMessage } from './channel.js';
import { CpuWatch } from './cpu-watch.js';
import { guardMemory } from './memory-guard.js';
import type { IsolateLimits } from './options.js';
import type { RelayFrame, RelayReplyHead } from './relay-frame.js';
import { RunClock } from './run-clock.js';
import type { ProcessEnd, SandboxProcess } from './sandbox-process.js';
import { describeExit } from './spawn-workerd.js';
import { isolateText } from './texts.js';

/**
 * How long a process has to answer `cancel`. When it has not, and it burned CPU meanwhile, it is
 * spinning (its only JavaScript thread is held) and is killed. When it used almost no CPU it is
 * merely not being scheduled on a loaded host: it gets another grace period, up to the cap, so
 * its logs are not lost for nothing.
 */
const CANCEL_GRACE_MS = 50;
const CANCEL_GRACE_CAP_MS = 1_000;
/** The share of the grace period a process must have spent on CPU to count as spinning. */
const SPINNING_CPU_SHARE = 0.3;

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

/** Which bound ended the run: the wall clock (`timeout`), or its CPU time (`cpuTimeout`). */
type Expiry = 'timeout' | 'cpu';

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
function answerStale(process: SandboxProcess, message: SupervisorMessage): void {
  if (message.t === 'call')
    process.send({ t: 'answer', ask: message.ask, envelope: encodeErrorEnvelope(COMPLETED_MESSAGE) });
}

interface ResponseLike {
  status: number;
  statusText?: string;
  headers: Iterable<[string, string]>;
  body: unknown;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A response's body, read only up to `cap` bytes while it streams, so an outbound function that
 * answers with gigabytes never has them buffered here.
 */
async function readCapped(response: ResponseLike, cap: number): Promise<Uint8Array> {
  const declared = Number(new Headers([...response.headers]).get('content-length'));
  if (declared > cap) throw new RangeError(isolateText.responseBodyTooLarge(cap));
  if (!(response.body instanceof ReadableStream)) {
    const whole = new Uint8Array(await response.arrayBuffer());
    if (whole.byteLength > cap) throw new RangeError(isolateText.responseBodyTooLarge(cap));
    return whole;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel().catch(() => undefined);
      throw new RangeError(isolateText.responseBodyTooLarge(cap));
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

function isResponseLike(value: unknown): value is ResponseLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ResponseLike>;
  return (
    typeof candidate.status === 'number' &&
    typeof candidate.arrayBuffer === 'function' &&
    candidate.headers !== undefined
  );
}

export class Run {
  readonly outcome: Promise<RunOutcome>;
  readonly #spec: RunSpec;
  readonly #process: SandboxProcess;
  readonly #clock: RunClock;
  /** Over the whole run: its process's CPU time from the start, against `cpuTimeout` when set. */
  readonly #cpu: CpuWatch;
  #expiry: Expiry = 'timeout';
  #cpuMs: number | undefined;
  #releaseMemoryGuard: (() => void) | undefined;
  #state: RunState = 'running';
  #started = false;
  /** Its caller aborted it: whatever the run still produces is given up. */
  #cancelled = false;
  #grace: NodeJS.Timeout | undefined;
  #resolve!: (outcome: RunOutcome) => void;
  #reject!: (error: unknown) => void;

  constructor(process: SandboxProcess, spec: RunSpec) {
    this.#spec = spec;
    this.#process = process;
    // While a host wait stops it, the clock counts the process's own CPU time instead.
    this.#clock = new RunClock(spec.timeout, spec.countHostWaits, process, () => this.#expire('timeout'));
    this.#cpu = new CpuWatch(process, spec.cpuTimeout ?? Number.POSITIVE_INFINITY, () => this.#expire('cpu'));
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
    const text = JSON.stringify(this.#spec.start);
    const size = Buffer.byteLength(text, 'utf8');
    const cap = this.#spec.limits.maxRequestBytes;
    if (size > cap) {
      this.#finish({ result: undefined, error: isolateText.requestTooLarge(size, cap), logs: [] }, 'keep');
      return;
    }
    // `bound` arms the sandbox's race (harness.js), which can prove a win the host's clock missed.
    this.#process.sendText(text);
    this.#clock.start();
    this.#cpu.start();
    this.#releaseMemoryGuard = guardMemory(this.#process.pid, this.#spec.memoryLimitMb, () => this.#memoryExceeded());
  }

  /**
   * Its caller went away (`options.signal`): give the run up as at its bound, without waiting on
   * the sandbox's race. The supervisor answers at once unless the process spins, which is killed.
   * The outcome still resolves once the process is settled, so the pool knows its fate.
   */
  cancel(): void {
    if (this.#state === 'finished') return;
    this.#cancelled = true;
    if (!this.#started) {
      this.#finish(this.#timedOut([]), 'keep');
      return;
    }
    if (this.#state === 'running') this.#giveUp(false);
  }

  /** Ends the run with a rejection (the executor is being disposed). */
  abort(error: ExecutorError): void {
    if (this.#state === 'finished') return;
    this.#settle();
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
    this.#clock.beginHostWait();
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
      this.#clock.endHostWait();
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
    this.#clock.beginHostWait();
    try {
      const response: unknown = await outbound(request);
      if (!isResponseLike(response)) throw new TypeError(isolateText.outboundNotResponse(describeValue(response)));
      const nullBody = response.body === null;
      const body = nullBody ? new Uint8Array() : await readCapped(response, this.#spec.limits.maxResponseBodyBytes);
      return {
        head: {
          ok: true,
          status: response.status,
          statusText: response.statusText ?? '',
          headers: [...response.headers],
          nullBody,
        },
        body,
      };
    } catch (error) {
      return { head: { ok: false, error: messageOf(error) }, body: new Uint8Array() };
    } finally {
      this.#clock.endHostWait();
    }
  }

  #done(message: DoneMessage): void {
    const logs = message.logs;
    // The sandbox's race proves it settled within its bound, counted from after its synchronous
    // prefix (as upstream counts), even though the host's clock, started at hand-off, ran out.
    // Nothing proves a win over the CPU bound: the CPU time was spent.
    if (this.#state === 'cancelling' && (this.#cancelled || this.#expiry === 'cpu' || !message.inTime)) {
      // It settled inside the grace period, after its bound: still a timeout. Anything it
      // retained is released, since no execution id will ever name it.
      if (this.#spec.retain && message.outcome === 'value') this.#process.send({ t: 'release', exec: this.#spec.id });
      this.#finish(this.#timedOut(logs), 'retire');
      return;
    }
    const start = this.#spec.start;
    switch (message.outcome) {
      case 'missing': {
        this.#settle();
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

  #expire(expiry: Expiry): void {
    if (this.#state !== 'running') return;
    this.#expiry = expiry;
    // At the wall-clock bound the sandbox's race may still prove a win; past the CPU bound, never.
    this.#giveUp(expiry === 'timeout');
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
    if (this.#state === 'finished') return;
    this.#process.kill();
    const error = isolateText.processOutputTooLarge(this.#spec.limits.maxProcessOutputBytes);
    this.#finish({ result: undefined, error, logs: [] }, 'dead');
  }

  /** Past `pool.memoryLimitMb`: the guard has ended the process; the run reports the cap. */
  #memoryExceeded(): void {
    if (this.#state === 'finished') return;
    this.#process.kill();
    const error = isolateText.memoryLimit(this.#spec.memoryLimitMb);
    this.#finish({ result: undefined, error, logs: [] }, 'dead');
  }

  /** The pool is ending its process over `pool.memoryBudgetMb`: the run reports that, not a death. */
  endOverBudget(error: string): void {
    if (this.#state === 'finished') return;
    this.#process.kill();
    this.#finish({ result: undefined, error, logs: [] }, 'dead');
  }

  /**
   * Asks the supervisor to give the run up, and kills the process when it does not answer because
   * it spins. `race`: at the bound, where the sandbox's race may still prove the run won.
   */
  #giveUp(race: boolean): void {
    this.#state = 'cancelling';
    this.#clock.stop();
    this.#cpu.stop();
    this.#process.send({ t: 'cancel', run: this.#spec.id, race });
    const since = performance.now();
    let cpuBefore = this.#process.cpuMs();
    let checkedAt = since;
    const check = () => {
      const now = performance.now();
      const cpuNow = this.#process.cpuMs();
      const spinning =
        cpuBefore === undefined || cpuNow === undefined || cpuNow - cpuBefore >= SPINNING_CPU_SHARE * (now - checkedAt);
      if (spinning || now - since >= CANCEL_GRACE_CAP_MS) {
        this.#finish(this.#timedOut([]), 'kill');
        return;
      }
      cpuBefore = cpuNow;
      checkedAt = now;
      this.#grace = setTimeout(check, CANCEL_GRACE_MS);
    };
    this.#grace = setTimeout(check, CANCEL_GRACE_MS);
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
    const error =
      this.#expiry === 'cpu' && this.#spec.cpuTimeout !== null
        ? formatCpuTimeout(this.#spec.cpuTimeout)
        : ExecutionTimeoutError.format(this.#spec.timeout);
    return { result: undefined, error, logs };
  }

  #settle(): void {
    this.#state = 'finished';
    // Read before the process may be killed; a process that already died reads as unknown.
    this.#cpuMs = this.#started ? this.#cpu.used() : undefined;
    this.#cpu.stop();
    this.#clock.stop();
    this.#releaseMemoryGuard?.();
    clearTimeout(this.#grace);
  }

  #finish(result: ExecuteResult, fate: ProcessFate, retained = false): void {
    if (this.#state === 'finished') return;
    this.#settle();
    this.#resolve({ result, fate, retained, cpuMs: this.#cpuMs });
  }
}
