/**
 * How a run carries out the verdicts of its ending (src/isolate/host/run/run.ts over run-ending.ts),
 * without workerd: a fake process the test drives (its replies, its caps, its end), which records
 * what the host sends it and whether it was killed. Each ending's result text comes from where the
 * texts are composed; the table itself is run-ending.test.ts's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { channelGrammar } from '../../../../src/isolate/contract/channel.js';
import type { HostMessage, SupervisorMessage } from '../../../../src/isolate/contract/messages.js';
import type { MemberProcess, ProcessEnd } from '../../../../src/isolate/host/member/member-process.js';
import { Run, type RunSpec } from '../../../../src/isolate/host/run/run.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { encodeErrorEnvelope } from '../../../../src/protocol/dispatch.js';
import { ExecutionTimeoutError, ExecutorError } from '../../../../src/protocol/errors.js';
import { COMPLETED_MESSAGE, formatCpuTimeout } from '../../../../src/protocol/texts.js';
import { encodeValue } from '../../../../src/protocol/value-codec.js';

class FakeProcess {
  onStale: (message: SupervisorMessage) => void = () => {};
  readonly routes = new Map<string, (message: SupervisorMessage) => void>();
  readonly sent: HostMessage[] = [];
  cpu: number | undefined = 0;
  kills = 0;
  guardReleased = false;
  ended: ((end: ProcessEnd) => void) | undefined;
  heapFull: (() => void) | undefined;
  outputFlood: (() => void) | undefined;
  memoryExceeded: (() => void) | undefined;

  /** A message from the supervisor, as the socket hands it on: to its run, or as stale. */
  onMessage(message: SupervisorMessage): void {
    (this.routes.get(message.run) ?? this.onStale)(message);
  }

  route(run: string, handler: (message: SupervisorMessage) => void): () => void {
    this.routes.set(run, handler);
    return () => this.routes.delete(run);
  }

  watchEnd(watcher: (end: ProcessEnd) => void): () => void {
    this.ended = watcher;
    return () => {};
  }

  watchHeap(watcher: () => void): () => void {
    this.heapFull = watcher;
    return () => {};
  }

  watchOutput(_maxBytes: number, watcher: () => void): () => void {
    this.outputFlood = watcher;
    return () => {};
  }

  armMemoryGuard(_limitMb: number, exceeded: () => void): () => void {
    this.memoryExceeded = exceeded;
    return () => {
      this.guardReleased = true;
    };
  }

  sendFrame(frame: string | Uint8Array): void {
    this.sent.push(
      channelGrammar.parseHostMessage(typeof frame === 'string' ? frame : new TextDecoder().decode(frame))!,
    );
  }

  send(message: HostMessage): void {
    this.sent.push(message);
  }

  kill(): void {
    this.kills += 1;
  }

  cpuMs(): number | undefined {
    return this.cpu;
  }

  /** The `cancel` messages the host sent. */
  cancels(): HostMessage[] {
    return this.sent.filter((message) => message.t === 'cancel');
  }
}

const LIMITS = {
  maxRequestBytes: 1 << 20,
  maxProcessOutputBytes: 4096,
  maxToolResultBytes: 1 << 20,
  maxResponseBodyBytes: 1 << 20,
} as RunSpec['limits'];

const START: RunSpec['start'] = {
  t: 'run',
  run: 'r1',
  entry: '',
  modules: {},
  outbound: false,
  retain: false,
  bound: 60_000,
};

const runs: Run[] = [];

afterEach(() => {
  for (const run of runs.splice(0)) run.abort(new ExecutorError('EXECUTOR_DISPOSED', 'test over'));
});

const SPEC: RunSpec = {
  id: 'r1',
  start: START,
  timeout: 60_000,
  cpuTimeout: null,
  countHostWaits: false,
  turnGraceMs: 3_000,
  dispatch: null,
  outbound: null,
  retain: false,
  heapLimitMb: 64,
  memoryLimitMb: 128,
  limits: LIMITS,
  programStartTimeoutMs: 10_000,
};

/** What the caller that went away is answered with (composed by the executor: cancellation.ts). */
const CANCELLED = new ExecutorError('EXECUTION_CANCELLED', 'cancelled');

/** A run handed to a fake process whose program starts at once (its `started`), unless `started` is false. */
function startRun(spec: Partial<RunSpec> = {}, started = true) {
  const sandbox = new FakeProcess();
  const run = new Run({ ...SPEC, ...spec });
  runs.push(run);
  run.start(sandbox as unknown as MemberProcess);
  if (started) sandbox.onMessage({ t: 'started', run: 'r1' });
  return { sandbox, run };
}

function done(settledBeforeDeadline: boolean, value: unknown = 42): SupervisorMessage {
  const logs = [{ level: 'log' as const, message: 'line' }];
  return { t: 'done', run: 'r1', outcome: 'value', value: encodeValue(value), logs, settledBeforeDeadline };
}

async function until(condition: () => boolean, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const exit = { code: 1, signal: null, stderr: '', oomKilled: false, heapExhausted: false };

describe("an execution's clock starts with its program", () => {
  it("counts its timeout from the program's start, not from the hand-off while its process loads it", async () => {
    const { sandbox, run } = startRun({ timeout: 30 }, false);
    // Far past the bound, the program has not started: its process is still loading it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(sandbox.cancels()).toEqual([]);
    sandbox.onMessage({ t: 'started', run: 'r1' });
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: true }]);
    sandbox.onMessage(done(true));
    expect((await run.outcome).result.result).toBe(42);
  });

  it('still spends its budget on the CPU time its process burns before the program starts (a module that spins)', async () => {
    const { sandbox, run } = startRun({ timeout: 30 }, false);
    sandbox.cpu = 100;
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: true }]);
    sandbox.onMessage({ t: 'cancelled', run: 'r1', logs: [] });
    expect((await run.outcome).result.error).toBe(ExecutionTimeoutError.format(30));
  });

  it('takes any message of the run as its start, should its started not come first', async () => {
    const { sandbox, run } = startRun({ timeout: 30 }, false);
    sandbox.onMessage({ t: 'call', run: 'r1', ask: 1, provider: 'p', tool: 't', args: '[]' });
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toHaveLength(1);
    sandbox.onMessage(done(true));
    expect((await run.outcome).result.result).toBe(42);
  });

  it('ends a run whose program does not start within programStartTimeoutMs with its text, and kills the process', async () => {
    const { sandbox, run } = startRun({ programStartTimeoutMs: 30 }, false);
    const outcome = await run.outcome;
    expect(outcome.result).toEqual({
      result: undefined,
      error: isolateText.programStartTimedOut(30),
      ending: { code: 'PROGRAM_START_TIMEOUT', programStartTimeoutMs: 30 },
      logs: [],
    });
    expect(run.fate).toBe('killed');
    expect(sandbox.cancels()).toEqual([]);
  });

  it("starts an invocation's clock at hand-off: its worker is loaded already", async () => {
    const invoke: RunSpec['start'] = { t: 'invoke', run: 'r1', exec: 'e1', handle: 'h1', args: '[]', bound: 30 };
    const { sandbox, run } = startRun({ timeout: 30, start: invoke }, false);
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toHaveLength(1);
    sandbox.onMessage(done(true));
    expect((await run.outcome).result.result).toBe(42);
  });
});

describe('Run', () => {
  it('returns the sandbox outcome and keeps the process', async () => {
    const { sandbox, run } = startRun();
    expect(sandbox.sent.map((message) => message.t)).toEqual(['run']);
    sandbox.onMessage(done(true));
    const outcome = await run.outcome;
    expect(outcome.result).toEqual({ result: 42, logs: [{ level: 'log', message: 'line' }] });
    expect(run.fate).toBe('keep');
    expect(sandbox.guardReleased).toBe(true);
  });

  it('at its wall-clock bound, sends one cancel the race may win, and a done in time still stands', async () => {
    const { sandbox, run } = startRun({ timeout: 10 });
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: true }]);
    sandbox.onMessage(done(true));
    expect((await run.outcome).result.result).toBe(42);
    expect(run.fate).toBe('keep');
  });

  it('at its wall-clock bound, answers a lost race with the timeout text and its lines, and retires the process', async () => {
    const { sandbox, run } = startRun({ timeout: 10 });
    await until(() => sandbox.cancels().length > 0, 2_000);
    sandbox.onMessage({ t: 'cancelled', run: 'r1', logs: [{ level: 'warn', message: 'so far' }] });
    expect((await run.outcome).result).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(10),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: 10 },
      logs: [{ level: 'warn', message: 'so far' }],
    });
    expect(run.fate).toBe('retire');
  });

  it('answers a caller that went away after the bound with its cancellation at once, and releases what the run retained', async () => {
    const { sandbox, run } = startRun({ timeout: 10, retain: true });
    await until(() => sandbox.cancels().length > 0, 2_000);
    run.cancel(CANCELLED);
    // Answered before the process is: the give-up is already sent, so no second cancel.
    await expect(run.answer).rejects.toBe(CANCELLED);
    expect(sandbox.cancels()).toHaveLength(1);
    sandbox.onMessage(done(true));
    // The race's win no longer counts: the run is the caller's cancellation, and its process retired.
    await expect(run.outcome).rejects.toBe(CANCELLED);
    expect(sandbox.sent.at(-1)).toEqual({ t: 'release', exec: 'r1' });
    expect(run.fate).toBe('retire');
  });

  it('answers a caller that goes away while the run runs at once, gives the run up with no race to win, and settles its process after', async () => {
    const { sandbox, run } = startRun();
    run.cancel(CANCELLED);
    await expect(run.answer).rejects.toBe(CANCELLED);
    expect(sandbox.cancels()).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: false }]);
    expect(run.fate).toBe('keep');
    sandbox.onMessage({ t: 'cancelled', run: 'r1', logs: [] });
    await expect(run.outcome).rejects.toBe(CANCELLED);
    expect(run.fate).toBe('retire');
  });

  it('ends a run whose caller went away before it started, sending nothing and keeping its process', async () => {
    const sandbox = new FakeProcess();
    const run = new Run(SPEC);
    run.cancel(CANCELLED);
    run.start(sandbox as unknown as MemberProcess);
    await expect(run.answer).rejects.toBe(CANCELLED);
    await expect(run.outcome).rejects.toBe(CANCELLED);
    expect(sandbox.sent).toEqual([]);
    expect(run.started).toBe(false);
    expect(run.fate).toBe('keep');
  });

  it('answers a caller that goes away while the run waits for a process, and withdraws it from the wait with that answer', async () => {
    const run = new Run(SPEC);
    expect(run.withdrawn.aborted).toBe(false);
    run.cancel(CANCELLED);
    await expect(run.answer).rejects.toBe(CANCELLED);
    // Its place in the pool's queue is given up, with the same answer: the queue decides nothing.
    expect(run.withdrawn.aborted).toBe(true);
    expect(run.withdrawn.reason).toBe(CANCELLED);
    // A process handed to it after that is not started on, and is kept.
    const sandbox = new FakeProcess();
    run.start(sandbox as unknown as MemberProcess);
    expect(sandbox.sent).toEqual([]);
    expect(run.started).toBe(false);
    expect(run.fate).toBe('keep');
  });

  it("rejects a run the pool gives no process with the pool's reason; its caller going away after changes nothing", async () => {
    const run = new Run(SPEC);
    const full = new ExecutorError('QUEUE_FULL', isolateText.queueFull(2), { retryable: true });
    run.unserved(full);
    run.cancel(CANCELLED);
    await expect(run.answer).rejects.toBe(full);
    await expect(run.outcome).rejects.toBe(full);
    expect(run.fate).toBe('keep');
  });

  it('is not withdrawn once it has its process: its caller going away gives the run up there', async () => {
    const { sandbox, run } = startRun();
    run.cancel(CANCELLED);
    await expect(run.answer).rejects.toBe(CANCELLED);
    expect(run.withdrawn.aborted).toBe(false);
    sandbox.onMessage({ t: 'cancelled', run: 'r1', logs: [] });
    await expect(run.outcome).rejects.toBe(CANCELLED);
    expect(run.withdrawn.aborted).toBe(false);
  });

  it('past its CPU bound, gives up with no race to win and answers with the CPU text', async () => {
    const { sandbox, run } = startRun({ cpuTimeout: 30 });
    sandbox.cpu = 1_000;
    await until(() => sandbox.cancels().length > 0, 2_000);
    expect(sandbox.cancels()).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: false }]);
    sandbox.onMessage(done(true));
    const { result } = await run.outcome;
    expect(result.error).toBe(formatCpuTimeout(30));
    expect(result.ending).toEqual({ code: 'CPU_TIMEOUT', cpuTimeout: 30 });
    expect(run.fate).toBe('retire');
  });

  it("kills a process that spins through its grace, and reports the caller's cancellation", async () => {
    const { sandbox, run } = startRun();
    sandbox.cpu = undefined;
    run.cancel(CANCELLED);
    await expect(run.outcome).rejects.toBe(CANCELLED);
    expect(run.fate).toBe('kill');
    // The pool kills it as the run hands it back, not the run.
    expect(sandbox.kills).toBe(0);
  });

  it.each([
    [
      'heap',
      (sandbox: FakeProcess) => sandbox.heapFull!(),
      isolateText.outOfMemory(64),
      { code: 'OUT_OF_MEMORY', heapLimitMb: 64 },
    ],
    [
      'memory',
      (sandbox: FakeProcess) => sandbox.memoryExceeded!(),
      isolateText.memoryLimit(128),
      { code: 'MEMORY_LIMIT', memoryLimitMb: 128 },
    ],
    [
      'output',
      (sandbox: FakeProcess) => sandbox.outputFlood!(),
      isolateText.processOutputTooLarge(4096),
      { code: 'OUTPUT_TOO_LARGE', maxProcessOutputBytes: 4096 },
    ],
  ])(
    'ends at the %s cap, even while given up: kills its process at once, reports the cap, and a death after it changes nothing',
    async (_cap, pass, text, ending) => {
      const { sandbox, run } = startRun();
      run.cancel(CANCELLED);
      pass(sandbox);
      expect(sandbox.kills).toBe(1);
      sandbox.ended!({ intended: true, exit });
      expect((await run.outcome).result).toEqual({ result: undefined, error: text, ending, logs: [] });
      expect(run.fate).toBe('killed');
    },
  );

  it("ends over the memory budget, or for another tenant's share, with the pool's account as data and its text", async () => {
    const budget = startRun();
    budget.run.endOverBudget({ usedMb: 300.4, budgetMb: 256, memberMb: 120.6 });
    expect(budget.sandbox.kills).toBe(1);
    expect((await budget.run.outcome).result).toEqual({
      result: undefined,
      error: isolateText.memoryBudget(300.4, 256, 120.6),
      ending: { code: 'MEMORY_BUDGET', usedMb: 300.4, budgetMb: 256, memberMb: 120.6 },
      logs: [],
    });
    expect(budget.run.fate).toBe('killed');

    const share = startRun();
    share.run.endForTenantShare({ heldMb: 200, shareMb: 128, percent: 50 });
    expect(share.sandbox.kills).toBe(1);
    expect((await share.run.outcome).result).toEqual({
      result: undefined,
      error: isolateText.tenantShareReclaimed(200, 128, 50),
      ending: { code: 'TENANT_SHARE_RECLAIMED', heldMb: 200, shareMb: 128, percent: 50 },
      logs: [],
    });
    expect(share.run.fate).toBe('killed');
  });

  it('reports a process that died as its death, or, once the run is given up, as the bound', async () => {
    const running = startRun();
    running.sandbox.ended!({ intended: false, exit });
    expect((await running.run.outcome).result).toEqual({
      result: undefined,
      error: isolateText.processEnded(isolateText.exitStatus(1, null)),
      ending: { code: 'PROCESS_ENDED', exitCode: 1, signal: null },
      logs: [],
    });
    expect(running.run.fate).toBe('dead');

    const givenUp = startRun({ timeout: 10 });
    await until(() => givenUp.sandbox.cancels().length > 0, 2_000);
    givenUp.sandbox.ended!({ intended: false, exit });
    expect((await givenUp.run.outcome).result.error).toBe(ExecutionTimeoutError.format(10));
    expect(givenUp.run.fate).toBe('dead');

    const abandoned = startRun();
    abandoned.run.cancel(CANCELLED);
    abandoned.sandbox.ended!({ intended: false, exit });
    await expect(abandoned.run.outcome).rejects.toBe(CANCELLED);
    expect(abandoned.run.fate).toBe('dead');
  });

  it.each([
    ['the kernel ended it at its cgroup cap', { oomKilled: true }, { code: 'MEMORY_LIMIT', memoryLimitMb: 128 }],
    ['V8 aborted it, its heap exhausted', { heapExhausted: true }, { code: 'OUT_OF_MEMORY', heapLimitMb: 64 }],
  ])(
    'reports a death whose cause its process tells (%s) as that cap, by data, whatever its stderr says',
    async (_cause, told, ending) => {
      const { sandbox, run } = startRun();
      sandbox.ended!({ intended: false, exit: { ...exit, stderr: 'something else entirely', ...told } });
      const { result } = await run.outcome;
      expect(result.ending).toEqual(ending);
      expect(result.error).toBe(
        ending.code === 'MEMORY_LIMIT' ? isolateText.memoryLimit(128) : isolateText.outOfMemory(64),
      );
      expect(run.fate).toBe('dead');
    },
  );

  it("does not read a cap from a death's stderr: an exit the process tells no cause of is its exit", async () => {
    const { sandbox, run } = startRun();
    sandbox.ended!({ intended: false, exit: { ...exit, stderr: 'FATAL ERROR: Reached heap limit' } });
    expect((await run.outcome).result.ending).toEqual({ code: 'PROCESS_ENDED', exitCode: 1, signal: null });
  });

  it('refuses a request over its cap before sending it, and keeps the process', async () => {
    const { sandbox, run } = startRun({ limits: { ...LIMITS, maxRequestBytes: 10 } });
    expect(sandbox.sent).toEqual([]);
    const outcome = await run.outcome;
    // The size of the frame it would have sent: the run's frame (channel.ts encodeRunFrame).
    const size = channelGrammar.encodeRunFrame(START as Extract<typeof START, { t: 'run' }>).byteLength;
    expect(outcome.result.error).toBe(isolateText.requestTooLarge(size, 10));
    expect(outcome.result.ending).toEqual({ code: 'REQUEST_TOO_LARGE', bytes: size, maxRequestBytes: 10 });
    expect(outcome.cpuMs).toBeUndefined();
    expect(run.fate).toBe('keep');
  });

  it('rejects a disposed run, settles once, and answers a later tool call as one of a finished run', async () => {
    const { sandbox, run } = startRun();
    const disposed = new ExecutorError('EXECUTOR_DISPOSED', 'disposed');
    run.abort(disposed);
    await expect(run.outcome).rejects.toBe(disposed);
    await expect(run.answer).rejects.toBe(disposed);
    run.cancel(CANCELLED);
    sandbox.onMessage(done(true));
    sandbox.onMessage({ t: 'call', run: 'r1', ask: 7, provider: 'codemode', tool: 'search', args: '' });
    expect(sandbox.sent.map((message) => message.t)).toEqual(['run', 'answer']);
    expect(sandbox.sent[1]).toEqual({ t: 'answer', ask: 7, envelope: encodeErrorEnvelope(COMPLETED_MESSAGE) });
    expect(run.fate).toBe('keep');
  });
});
