/**
 * `options.signal` on RemoteExecutor, end to end against one real daemon: an abort rejects the call
 * at once with the EXECUTION_CANCELLED IsolateExecutor uses, and the cancel reaches the daemon,
 * whose IsolateExecutor gives the run up and releases its sandbox process.
 *
 * The daemon runs one sandbox process and no spare, so "the next execution runs" proves the
 * cancelled run's process was released. It numbers connections in order, and only this file
 * connects to it, so each test knows its connection's number.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CancellableMethod } from '../../src/protocol/cancellation.js';
import { createEnvelopeDispatch, ExecutorError, HANDLE_KEY } from '../../src/protocol/index.js';
import { cancellationText } from '../../src/protocol/texts.js';
import { type ConnectOptions, connect, type RemoteExecutor } from '../../src/remote/index.js';
import { Session } from '../../src/remote/session.js';
import { formatDuplicateCancelToken, formatInvalidCancelToken } from '../../src/server/texts.js';
import { countingWebSocket, NodeWebSocket, toolGate } from '../support/client.js';
import { type Daemon, startDaemon, stopAllDaemons } from '../support/daemon.js';
import { isAlive, waitFor, waitForSpin, workerdDescendants } from '../support/processes.js';

const TRIVIAL = { code: 'async () => 42' };

let daemon: Daemon;
let connections = 0;

beforeAll(async () => {
  daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
});

afterAll(stopAllDaemons);

/** Connects, and returns the number the daemon gave the connection. */
async function open(options: ConnectOptions = {}): Promise<{ executor: RemoteExecutor; connection: number }> {
  const executor = await connect(daemon.url, { websocket: NodeWebSocket, ...options });
  connections += 1;
  return { executor, connection: connections };
}

/**
 * The call rejected with IsolateExecutor's cancellation error, and locally: its cause is the very
 * reason the test aborted with, which no answer from the daemon could carry.
 */
async function expectCancelled(call: Promise<unknown>, method: CancellableMethod, reason: Error): Promise<void> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ExecutorError);
  expect(error).toMatchObject({ code: 'EXECUTION_CANCELLED', message: cancellationText.cancelled(method) });
  expect((error as Error).cause).toBe(reason);
}

/** The daemon's one line about an execution, once it has settled (or was cancelled with its connection). */
async function outcomeOf(connection: number, kind: CancellableMethod, execution: number): Promise<string> {
  const line = await daemon.waitForLine(new RegExp(`^connection ${connection} ${kind} ${execution} `));
  return line.replace(/ in \d+ ms$/, '').slice(`connection ${connection} ${kind} ${execution} `.length);
}

it('aborting an execute whose program spins rejects it, and the daemon kills the spinning sandbox process', async () => {
  const { executor, connection } = await open();
  try {
    let ready!: () => void;
    const reached = new Promise<void>((resolve) => (ready = resolve));
    const dispatch = createEnvelopeDispatch({ signal: () => (ready(), true) }, { active: true });
    const controller = new AbortController();
    const spinning = executor.execute(
      {
        code: 'async () => { await signal.ready(); while (true) {} }',
        providers: [{ name: 'signal', tools: ['ready'] }],
        dispatch,
        // The daemon's maximum bound (300 s): only the cancel can end this spin in the test's time.
        timeout: null,
      },
      { signal: controller.signal },
    );
    await reached;
    const [sandbox] = workerdDescendants(daemon.child.pid!);
    expect(sandbox).toBeDefined();
    await waitForSpin(sandbox!);

    const reason = new Error('the user gave up');
    controller.abort(reason);
    await expectCancelled(spinning, 'execute', reason);
    expect(await outcomeOf(connection, 'execute', 1)).toBe('threw EXECUTION_CANCELLED');
    await waitFor(() => !isAlive(sandbox!), 'the spinning sandbox process to be killed');
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
  } finally {
    await executor.dispose();
  }
});

it('aborting an execute that waits on a tool rejects at once, even while the daemon cannot answer', async () => {
  // No heartbeat verdict within the test's time: only a local rejection can settle the call.
  const { executor, connection } = await open({ heartbeatIntervalMs: 600_000, heartbeatTimeoutMs: 600_000 });
  const gate = toolGate();
  try {
    const controller = new AbortController();
    const waiting = executor.execute(
      { code: gate.code, providers: [gate.provider], dispatch: gate.dispatch },
      { signal: controller.signal },
    );
    await gate.reached;
    // A frozen daemon answers nothing, so a call waiting for its answer would never settle.
    daemon.kill('SIGSTOP');
    const reason = new Error('no longer needed');
    try {
      controller.abort(reason);
      await expectCancelled(waiting, 'execute', reason);
    } finally {
      daemon.kill('SIGCONT');
    }
    // The cancel, sent while the daemon was frozen, reaches it now and ends the run.
    expect(await outcomeOf(connection, 'execute', 1)).toBe('threw EXECUTION_CANCELLED');
    expect(gate.calls).toBe(1);
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
  } finally {
    gate.open();
    await executor.dispose();
  }
});

it('an already-aborted signal, or malformed options, reject before anything crosses, and still count toward rotation', async () => {
  const sockets = countingWebSocket();
  const { executor, connection } = await open({ websocket: sockets.websocket, rotateAfterExecutions: 1 });
  try {
    const reason = new Error('aborted before the call');
    await expectCancelled(executor.execute(TRIVIAL, { signal: AbortSignal.abort(reason) }), 'execute', reason);
    await expectCancelled(
      executor.invokeHandle({ executionId: 'x', handle: 'h' }, { signal: AbortSignal.abort(reason) }),
      'invokeHandle',
      reason,
    );
    await expect(executor.execute(TRIVIAL, { signal: 'stop' } as never)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: cancellationText.signalInvalid('execute', '"stop"'),
    });
    await expect(executor.invokeHandle({ executionId: 'x', handle: 'h' }, 5 as never)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: cancellationText.callOptionsInvalid('invokeHandle', '5'),
    });

    // The first execute reached the bound of 1, so this one runs on a fresh session.
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    expect(sockets.opened).toBe(2);
    connections += 1;
    expect(await daemon.waitForLine(new RegExp(`^connection ${connection} closed `))).toBe(
      `connection ${connection} closed after 0 executions`,
    );
    expect(await outcomeOf(connection + 1, 'execute', 1)).toBe('ok');
  } finally {
    await executor.dispose();
  }
});

it('aborting an invokeHandle call cancels it at the daemon too', async () => {
  const { executor, connection } = await open();
  const gate = toolGate();
  try {
    const retained = await executor.execute({
      code: 'async () => async () => await gate.wait()',
      providers: [gate.provider],
      dispatch: gate.dispatch,
      retainHandles: true,
    });
    const handle = (retained.result as Record<string, string>)[HANDLE_KEY]!;
    const controller = new AbortController();
    const call = executor.invokeHandle(
      { executionId: retained.executionId!, handle, args: [], dispatch: gate.dispatch },
      { signal: controller.signal },
    );
    await gate.reached;
    const reason = new Error('the handle took too long');
    controller.abort(reason);
    await expectCancelled(call, 'invokeHandle', reason);
    expect(await outcomeOf(connection, 'invokeHandle', 2)).toBe('threw EXECUTION_CANCELLED');
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
  } finally {
    gate.open();
    await executor.dispose();
  }
});

it("the daemon's cancel tokens: malformed is INVALID_REQUEST, one running call per token, unknown is a no-op", async () => {
  // The raw endpoint, to send what RemoteExecutor never would.
  const session = await Session.open(daemon.url, {
    websocket: NodeWebSocket,
    handshakeTimeout: 10_000,
    heartbeatInterval: 5_000,
    heartbeatTimeout: 5_000,
  });
  connections += 1;
  const gate = toolGate();
  try {
    const wire = { code: 'async () => 42', dispatch: null, outboundMode: 'default' as const };
    await expect(session.remote.execute({ ...wire, cancelToken: 5 as never })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: formatInvalidCancelToken(5),
    });
    await expect(session.remote.cancel('never sent')).resolves.toBeUndefined();

    const held = session.remote.execute({
      code: gate.code,
      providers: [gate.provider],
      dispatch: gate.dispatch,
      outboundMode: 'default',
      cancelToken: 't',
    });
    await gate.reached;
    await expect(session.remote.execute({ ...wire, cancelToken: 't' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: formatDuplicateCancelToken('t'),
    });
    gate.open();
    await expect(held).resolves.toMatchObject({ result: 'released' });
    // Settled: the token is free again, and cancelling it now changes nothing.
    await expect(session.remote.cancel('t')).resolves.toBeUndefined();
    await expect(session.remote.execute({ ...wire, cancelToken: 't' })).resolves.toMatchObject({ result: 42 });
  } finally {
    gate.open();
    session.dispose();
  }
});
