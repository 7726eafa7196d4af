/**
 * Timeouts, the run clock, wedged and dying processes, on the real workerd. One executor for the
 * file, with a warm spare, so every kill also exercises the pool's healing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolateText } from '../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import { ExecutionTimeoutError, type ExecutorError } from '../../src/protocol/errors.js';
import { cancellationText } from '../../src/protocol/texts.js';
import { HANDLE_KEY } from '../../src/protocol/types.js';
import { withSlack } from '../support/machine-slack.js';
import { isAlive, SPIN_TURN_GRACE_MS, waitFor, waitForSpin } from '../support/processes.js';

const HEAP_LIMIT_MB = 64;
let executor: IsolateExecutor;

beforeAll(() => {
  executor = new IsolateExecutor({
    timeout: 400,
    // Long enough that only an abort ends a spin sooner, on a loaded host too.
    maxTimeout: withSlack(5_000),
    turnGraceMs: SPIN_TURN_GRACE_MS,
    pool: { maxWorkers: 1, spare: 1, heapLimitMb: HEAP_LIMIT_MB },
  });
});

afterAll(async () => {
  await executor.dispose();
});

function pids(): number[] {
  return executor.stats().members.map((member) => member.pid);
}

/** A tool that answers after `ms`, longer than the bound. */
const slowDispatch = createEnvelopeDispatch(
  {
    slow: async (_tool, [ms]) => {
      await new Promise((resolve) => setTimeout(resolve, ms as number));
      return 'slow answer';
    },
  },
  { active: true },
);

/** The pool serves a trivial program, under the executor's maxTimeout: the 400 ms default is not what this checks. */
async function assertHealthy(): Promise<void> {
  expect(await executor.execute({ code: 'async () => "still serving"', timeout: null })).toEqual({
    result: 'still serving',
    logs: [],
  });
}

describe('the bound', () => {
  it('ends a synchronous spin at its bound, kills the wedged process, and the pool heals', async () => {
    await assertHealthy();
    const before = pids();
    const outcome = await executor.execute({
      code: 'async () => { console.log("spinning"); while (true) {} }',
      timeout: 300,
    });
    expect(outcome).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(300),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: 300 },
      logs: [],
    });
    await waitFor(() => before.some((pid) => !isAlive(pid)), 'the wedged process to die');
    await assertHealthy();
  });

  it('ends a spin that starts after an await', async () => {
    const outcome = await executor.execute({
      code: 'async () => { await new Promise((r) => setTimeout(r, 10)); while (true) {} }',
      timeout: 300,
    });
    expect(outcome.error).toBe(ExecutionTimeoutError.format(300));
    await assertHealthy();
  });

  it('gives up a run that never settles and keeps the lines it logged before the bound', async () => {
    const outcome = await executor.execute({
      code: 'async () => { console.log("waiting forever"); await new Promise(() => {}) }',
      timeout: 200,
    });
    expect(outcome).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(200),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: 200 },
      logs: [{ level: 'log', message: 'waiting forever' }],
    });
    await assertHealthy();
  });

  it('waits longer for a process that is merely not scheduled, so the lines it logged survive', async () => {
    // SIGSTOP stands in for a starved process: it answers nothing and burns no CPU until SIGCONT.
    const dispatch = createEnvelopeDispatch(
      {
        host: () => {
          const pid = executor.stats().members.find((member) => member.busy)!.pid;
          process.kill(pid, 'SIGSTOP');
          setTimeout(() => process.kill(pid, 'SIGCONT'), 500);
          return 'stopped';
        },
      },
      { active: true },
    );
    const outcome = await executor.execute({
      code: 'async () => { console.log("before the stop"); await host.stop(); await new Promise(() => {}) }',
      providers: [{ name: 'host', tools: ['stop'] }],
      dispatch,
      timeout: 200,
    });
    expect(outcome).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(200),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: 200 },
      logs: [{ level: 'log', message: 'before the stop' }],
    });
    await assertHealthy();
  });

  it("with a bound of 0, lets a run that settles on microtasks alone win, as upstream's in-sandbox race does", async () => {
    // Upstream arms setTimeout(0) after the arrow's synchronous prefix; microtasks run before it.
    expect(await executor.execute({ code: 'async () => { await Promise.resolve(); return 42 }', timeout: 0 })).toEqual({
      result: 42,
      logs: [],
    });
    const retained = await executor.execute({ code: 'async () => ({ next: () => "invoked" })', retainHandles: true });
    const handle = (retained.result as { next: Record<string, string> }).next[HANDLE_KEY]!;
    expect(await executor.invokeHandle({ executionId: retained.executionId!, handle, timeout: 0 })).toEqual({
      result: 'invoked',
      logs: [],
      executionId: retained.executionId,
    });
    await executor.closeHandles(retained.executionId!);
  });

  it('with a bound of 0, times out a run that awaits a timer, with the lines logged before', async () => {
    // The race timer (0 ms) is armed after the program's synchronous prefix, which sets the
    // program's timer: a 10 ms timer could fall due first when the host preempts that prefix for
    // 10 ms (upstream's race would then return too). A second's timer keeps scheduling out of it.
    const outcome = await executor.execute({
      code: 'async () => { console.log("before"); await new Promise((r) => setTimeout(r, 1_000)); return 42 }',
      timeout: 0,
    });
    expect(outcome).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(0),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: 0 },
      logs: [{ level: 'log', message: 'before' }],
    });
    await assertHealthy();
  });

  it('uses the construction default for an undefined timeout and maxTimeout for null', async () => {
    const code = 'async () => { await new Promise((r) => setTimeout(r, 700)); return "slept" }';
    expect((await executor.execute({ code })).error).toBe(ExecutionTimeoutError.format(400));
    expect(await executor.execute({ code, timeout: null })).toEqual({ result: 'slept', logs: [] });
  });
});

describe('the run clock', () => {
  // The bound also holds the sandbox's start, which a loaded host slows (past 600 ms beside two
  // busy loops): 1.5 s, stretched by the slowdown. Each host wait lasts twice the bound.
  const bound = withSlack(1_500);
  const request = {
    code: `async () => { console.log("asking"); return await slow.wait(${2 * bound}) }`,
    providers: [{ name: 'slow', tools: ['wait'] }],
    dispatch: slowDispatch,
    timeout: bound,
  };

  it('stops while a tool call is in flight by default', async () => {
    expect(await executor.execute(request)).toEqual({
      result: 'slow answer',
      logs: [{ level: 'log', message: 'asking' }],
    });
  });

  it('counts the tool call with countHostWaits: true', async () => {
    expect(await executor.execute({ ...request, countHostWaits: true })).toEqual({
      result: undefined,
      error: ExecutionTimeoutError.format(bound),
      ending: { code: 'EXECUTION_TIMEOUT', timeout: bound },
      logs: [{ level: 'log', message: 'asking' }],
    });
  });

  it('stops while an outbound request is in flight, and counts it with countHostWaits: true', async () => {
    const outbound = async () => {
      await new Promise((resolve) => setTimeout(resolve, 2 * bound));
      return new Response('late body');
    };
    const code = 'async () => (await fetch("https://example.test/")).text()';
    expect(await executor.execute({ code, outbound, timeout: bound })).toEqual({ result: 'late body', logs: [] });
    expect((await executor.execute({ code, outbound, timeout: bound, countHostWaits: true })).error).toBe(
      ExecutionTimeoutError.format(bound),
    );
  });
});

describe('processes that die', () => {
  it('ends a memory bomb with a clear error, and the pool heals', async () => {
    const outcome = await executor.execute({
      code: 'async () => { const hoard = []; while (true) hoard.push(new Array(1e5).fill(Math.random())); }',
      timeout: 5_000,
    });
    expect(outcome).toEqual({
      result: undefined,
      error: isolateText.outOfMemory(HEAP_LIMIT_MB),
      ending: { code: 'OUT_OF_MEMORY', heapLimitMb: HEAP_LIMIT_MB },
      logs: [],
    });
    await assertHealthy();
  });

  it('fails only the execution whose process was killed, and the pool heals', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let killed = 0;
    const dispatch = createEnvelopeDispatch(
      {
        host: async () => {
          // The run is now waiting on us: kill its workerd from outside, as an OOM killer would.
          killed = executor.stats().members.find((member) => member.busy)!.pid;
          process.kill(killed, 'SIGKILL');
          await gate;
          return 'never seen';
        },
      },
      { active: true },
    );
    const outcome = await executor.execute({
      code: 'async () => host.block()',
      providers: [{ name: 'host', tools: ['block'] }],
      dispatch,
      timeout: 5_000,
    });
    release();
    expect(outcome).toEqual({
      result: undefined,
      error: isolateText.processEnded('signal 9'),
      ending: { code: 'PROCESS_ENDED', exitCode: 137, signal: null },
      logs: [],
    });
    await waitFor(() => !isAlive(killed), 'the killed process to end');
    await assertHealthy();
  });
});

describe('the default outbound', () => {
  it('is blocked when the executor was built without one', async () => {
    const outcome = await executor.execute({
      code: 'async () => { await fetch("https://example.test/") }',
      timeout: null,
    });
    expect(outcome.error).toMatch(
      /^This worker is not permitted to access the internet via global functions like fetch\(\)/,
    );
  });
});

describe('cancellation through options.signal', () => {
  /** A tool the program calls first: once it resolves, the run is certainly in its sandbox. */
  function readyTool(): { dispatch: ReturnType<typeof createEnvelopeDispatch>; reached: Promise<void> } {
    let reach!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const dispatch = createEnvelopeDispatch(
      {
        host: (tool) => {
          if (tool === 'hang') return new Promise(() => {});
          reach();
          return 'go';
        },
      },
      { active: true },
    );
    return { dispatch, reached };
  }

  async function cancelled(promise: Promise<unknown>): Promise<ExecutorError> {
    const error = (await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    )) as ExecutorError | undefined;
    expect(error?.code).toBe('EXECUTION_CANCELLED');
    return error!;
  }

  const providers = [{ name: 'host', tools: ['ready', 'hang'] }];

  it('ends a spinning run at once: its process is killed and replaced, and the next execution runs', async () => {
    await assertHealthy();
    const { dispatch, reached } = readyTool();
    const controller = new AbortController();
    // timeout null is this executor's maxTimeout (5 s, stretched): only the abort can end the spin sooner.
    const spinning = executor.execute(
      { code: 'async () => { await host.ready(); while (true) {} }', providers, dispatch, timeout: null },
      { signal: controller.signal },
    );
    await reached;
    const spinner = executor.stats().members.find((member) => member.busy)!.pid;
    await waitForSpin(spinner);
    controller.abort();
    expect((await cancelled(spinning)).message).toBe(cancellationText.cancelled('execute'));
    await waitFor(() => !isAlive(spinner), 'the spinning process to be killed');
    await waitFor(() => !pids().includes(spinner), 'the pool to drop the killed process');
    await assertHealthy();
  });

  it('ends a run waiting on a tool, and takes a queued execution out of the queue', async () => {
    const { dispatch, reached } = readyTool();
    const first = new AbortController();
    const waiting = executor.execute(
      { code: 'async () => { await host.ready(); await host.hang() }', providers, dispatch, timeout: null },
      { signal: first.signal },
    );
    await reached;
    const holder = executor.stats().members.find((member) => member.busy)!.pid;
    // maxWorkers is 1: this one waits in the queue.
    const second = new AbortController();
    const queued = executor.execute({ code: 'async () => "never run"' }, { signal: second.signal });
    expect(executor.stats().queued).toBe(1);
    second.abort();
    expect((await cancelled(queued)).message).toBe(cancellationText.cancelled('execute'));
    expect(executor.stats().queued).toBe(0);
    first.abort();
    await cancelled(waiting);
    // Its abandoned code may still hold the sandbox, so the process is retired as after a timeout.
    await waitFor(() => !isAlive(holder), 'the process of the cancelled run to be retired');
    await assertHealthy();
  });

  it('cancels a spinning invokeHandle call: the process and the execution it retained end', async () => {
    const { dispatch, reached } = readyTool();
    const code = 'async () => ({ spin: async () => { await host.ready(); while (true) {} } })';
    const retained = await executor.execute({ code, providers, dispatch, retainHandles: true });
    const executionId = retained.executionId!;
    const handle = (retained.result as { spin: Record<string, string> }).spin[HANDLE_KEY]!;
    const controller = new AbortController();
    const spinning = executor.invokeHandle(
      { executionId, handle, dispatch, timeout: null },
      { signal: controller.signal },
    );
    await reached;
    const spinner = executor.stats().members.find((member) => member.busy)!.pid;
    await waitForSpin(spinner);
    controller.abort();
    expect((await cancelled(spinning)).message).toBe(cancellationText.cancelled('invokeHandle'));
    await waitFor(() => !isAlive(spinner), 'the spinning process to be killed');
    // The execution went with its process: the executor no longer counts it, nor holds the process.
    await waitFor(() => executor.stats().retained === 0, 'the lost execution to be dropped');
    await expect(executor.invokeHandle({ executionId, handle })).rejects.toMatchObject({ code: 'HANDLE_NOT_FOUND' });
    await assertHealthy();
  });

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await cancelled(executor.execute({ code: 'async () => 1' }, { signal: controller.signal }))).message).toBe(
      cancellationText.cancelled('execute'),
    );
    expect(executor.stats().members.every((member) => !member.busy)).toBe(true);
  });

  it('refuses a signal that is not an AbortSignal', async () => {
    await expect(executor.execute({ code: 'async () => 1' }, { signal: 'stop' as never })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: cancellationText.signalInvalid('execute', '"stop"'),
    });
    await expect(executor.execute({ code: 'async () => 1' }, 5 as never)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: cancellationText.callOptionsInvalid('execute', '5'),
    });
  });
});
