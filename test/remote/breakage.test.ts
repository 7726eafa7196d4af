/**
 * How a break is reported, reconnect and rotation, each against a real daemon process: killed
 * mid-call, frozen (SIGSTOP), restarted on the same port, and replaced by a silent listener.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { connect, RemoteExecutor } from '../../src/remote/index.js';
import { countingWebSocket, NodeWebSocket, rejection, toolGate } from '../support/client.js';
import { startDaemon, startMismatchDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';
import { withSlack } from '../support/machine-slack.js';

afterAll(stopAllDaemons);

const TRIVIAL = { code: 'async () => 42' };
/** Two sandbox processes, for tests that hold one execution open while another runs. */
const TWO_AT_ONCE = ['--max-workers', '2'];

function executionLines(lines: string[]): string[] {
  return lines.filter((line) => / execute \d+ /.test(line));
}

describe('a daemon killed while a call is in flight', () => {
  it('fails the call with CONNECTION_BROKEN, never replays it, and the next call reconnects', async () => {
    const first = await startDaemon();
    const executor = await connect(first.url, { websocket: NodeWebSocket, backoffMs: 20 });
    const gate = toolGate();
    const inFlight = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    first.kill('SIGKILL');

    const error = await rejection(inFlight);
    expect(error.code).toBe('CONNECTION_BROKEN');
    expect(error.message).toBe('Executor connection broke during execution');
    expect(error.retryable).toBe(true);
    expect(error.cause).toBeInstanceOf(Error);

    const second = await startDaemon(['--port', String(first.port)]);
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    gate.open();
    // The broken call ran once, on the first daemon; the second saw only the new call.
    expect(gate.calls).toBe(1);
    await second.waitForLine(/ execute 1 ok /);
    expect(executionLines(second.lines)).toHaveLength(1);
    await executor.dispose();
  });
});

describe('a frozen daemon (SIGSTOP, socket left open)', () => {
  it('fails every call in flight with CONNECTION_BROKEN through the heartbeat', async () => {
    const daemon = await startDaemon(TWO_AT_ONCE);
    const executor = await connect(daemon.url, {
      websocket: NodeWebSocket,
      // A loaded daemon answers heartbeats late: the figures are a quiet machine's, stretched.
      heartbeatIntervalMs: withSlack(100),
      heartbeatTimeoutMs: withSlack(300),
    });
    const gates = [toolGate(), toolGate()];
    const executions = gates.map((gate) =>
      executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch }),
    );
    await Promise.all(gates.map((gate) => gate.reached));
    daemon.kill('SIGSTOP');
    // Started in the same tick as the freeze, so it is in flight when the heartbeat fires.
    const handleCall = executor.closeHandles('some-execution');

    for (const execution of executions) {
      const error = await rejection(execution);
      expect(error.code).toBe('CONNECTION_BROKEN');
      expect(error.message).toBe('Executor connection broke during execution');
      expect(error.retryable).toBe(true);
    }
    const error = await rejection(handleCall);
    expect(error.code).toBe('CONNECTION_BROKEN');
    expect(error.message).toBe('Executor connection broke during a call');
    await executor.dispose();
    daemon.kill('SIGCONT');
  });
});

describe('a client blocked past the heartbeat timeout, within its lease', () => {
  it('keeps its session: an answer waiting in the socket counts', async () => {
    const daemon = await startDaemon();
    let blocked = false;
    // Right after a heartbeat leaves, this process's event loop is held for twice the timeout
    // periods (as synchronous host code would), in the check phase: when it lets go, the expired
    // timeout timer runs before the poll phase reads the answer that has been waiting in the socket.
    class BlockingAfterHeartbeat extends WebSocket {
      override send(data: string, ...rest: never[]): void {
        (super.send as (data: string, ...rest: never[]) => void)(data, ...rest);
        if (blocked || !data.includes('"heartbeat"')) return;
        blocked = true;
        // Past the timeout (300 ms), within the lease the daemon holds it to (1000 + 300 ms).
        setImmediate(() => {
          const until = Date.now() + 600;
          while (Date.now() < until);
        });
      }
    }
    const executor = await connect(daemon.url, {
      websocket: BlockingAfterHeartbeat,
      heartbeatIntervalMs: 1000,
      heartbeatTimeoutMs: 300,
    });
    const gate = toolGate();
    const running = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    await waitUntil(() => blocked);
    // More heartbeats go by unblocked before the gate opens.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    gate.open();
    await expect(running).resolves.toMatchObject({ result: 'released' });
    await executor.dispose();
  });
});

describe('reopening after a break', () => {
  it('opens exactly one socket for concurrent calls', async () => {
    const first = await startDaemon();
    const sockets = countingWebSocket();
    const executor = await connect(first.url, { websocket: sockets.websocket, backoffMs: 20 });
    expect(sockets.opened).toBe(1);
    const gate = toolGate();
    const inFlight = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    first.kill('SIGKILL');
    expect((await rejection(inFlight)).code).toBe('CONNECTION_BROKEN');

    const second = await startDaemon(['--port', String(first.port)]);
    const results = await Promise.all(Array.from({ length: 5 }, () => executor.execute(TRIVIAL)));
    expect(results.map((result) => result.result)).toEqual([42, 42, 42, 42, 42]);
    expect(sockets.opened).toBe(2);
    expect(second.lines.filter((line) => / opened from /.test(line))).toHaveLength(1);
    await executor.dispose();
  });

  it('makes a single attempt with reconnect: false, and maxReconnectAttempts otherwise', async () => {
    const daemon = await startDaemon(TWO_AT_ONCE);
    const single = countingWebSocket();
    const several = countingWebSocket();
    const once = await connect(daemon.url, { websocket: single.websocket, reconnect: false, backoffMs: 1 });
    const retrying = await connect(daemon.url, { websocket: several.websocket, maxReconnectAttempts: 3, backoffMs: 1 });
    const gates = [toolGate(), toolGate()];
    const calls = [once, retrying].map((executor, index) =>
      executor.execute({
        code: gates[index]!.code,
        providers: [gates[index]!.provider],
        dispatch: gates[index]!.dispatch,
      }),
    );
    await Promise.all(gates.map((gate) => gate.reached));
    daemon.kill('SIGKILL');
    await Promise.all(calls.map((call) => call.catch(() => {})));

    expect((await rejection(once.execute(TRIVIAL))).code).toBe('CONNECTION_REJECTED');
    expect(single.opened).toBe(1 + 1);
    expect((await rejection(retrying.execute(TRIVIAL))).code).toBe('CONNECTION_REJECTED');
    expect(several.opened).toBe(1 + 3);
    await Promise.all([once.dispose(), retrying.dispose()]);
  });

  it('stops at a protocol mismatch instead of retrying', async () => {
    const first = await startDaemon();
    const sockets = countingWebSocket();
    const executor = await connect(first.url, { websocket: sockets.websocket, maxReconnectAttempts: 5, backoffMs: 1 });
    const gate = toolGate();
    const inFlight = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    first.kill('SIGKILL');
    await inFlight.catch(() => {});

    await startMismatchDaemon(first.port);
    const error = await rejection(executor.execute(TRIVIAL));
    expect(error.code).toBe('PROTOCOL_MISMATCH');
    expect(error.message).toBe('Executor protocol mismatch: client speaks v1, server speaks v2');
    expect(sockets.opened).toBe(2);
    await executor.dispose();
  });
});

describe('dispose in the middle of a reconnect', () => {
  it('ends a pending handshake: the call rejects with RemoteExecutor is closed and the socket closes', async () => {
    // A listener that accepts TCP and never answers the upgrade: the attempt stays mid-handshake.
    const accepted: Socket[] = [];
    const silent: Server = createServer((socket) => {
      accepted.push(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const executor = new RemoteExecutor(`ws://127.0.0.1:${port}`, { websocket: NodeWebSocket });
    const call = executor.execute(TRIVIAL);
    await waitUntil(() => accepted.length === 1);
    const closed = new Promise((resolve) => accepted[0]!.once('close', resolve));

    await executor.dispose();
    const error = await rejection(call);
    expect(error.code).toBe('CONNECTION_BROKEN');
    expect(error.message).toBe('RemoteExecutor is closed');
    await closed;
    silent.close();
  });

  it('ends a backoff wait, and every later call rejects with RemoteExecutor is closed', async () => {
    const daemon = await startDaemon();
    const sockets = countingWebSocket();
    const executor = await connect(daemon.url, { websocket: sockets.websocket, backoffMs: 60_000 });
    const gate = toolGate();
    const inFlight = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    daemon.kill('SIGKILL');
    await inFlight.catch(() => {});

    const call = executor.execute(TRIVIAL);
    // The second socket is the first reopen attempt; it fails and the loop waits out a minute of backoff.
    await waitUntil(() => sockets.opened === 2);
    await executor.dispose();
    const error = await rejection(call);
    expect(error.code).toBe('CONNECTION_BROKEN');
    expect(error.message).toBe('RemoteExecutor is closed');
    for (const later of [
      executor.execute(TRIVIAL),
      executor.closeHandles('x'),
      executor.invokeHandle({ executionId: 'x', handle: 'h' }),
    ]) {
      const laterError = await rejection(later);
      expect([laterError.code, laterError.message]).toEqual(['CONNECTION_BROKEN', 'RemoteExecutor is closed']);
    }
    expect(sockets.opened).toBe(2);
  });
});

describe('rotateAfterExecutions', () => {
  it('retires the session while another call is in flight, which finishes on it before it closes', async () => {
    const daemon = await startDaemon(TWO_AT_ONCE);
    const sockets = countingWebSocket();
    const executor = await connect(daemon.url, { websocket: sockets.websocket, rotateAfterExecutions: 1 });
    const gate = toolGate();
    const long = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;

    // This one settles first and reaches the bound: the session is retired with `long` still on it.
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    expect(sockets.opened).toBe(2);
    expect(daemon.lines.some((line) => line.startsWith('connection 1 closed'))).toBe(false);

    gate.open();
    await expect(long).resolves.toMatchObject({ result: 'released' });
    await daemon.waitForLine(/^connection 1 closed after 2 executions$/);
    await daemon.waitForLine(/^connection 2 closed after 1 execution$/);
    await executor.dispose();
  });

  it('does not count the handle surface: only executions rotate', async () => {
    const daemon = await startDaemon();
    const sockets = countingWebSocket();
    const executor = await connect(daemon.url, { websocket: sockets.websocket, rotateAfterExecutions: 1 });
    await executor.closeHandles('none');
    await executor.closeHandles('none');
    await expect(executor.invokeHandle({ executionId: 'none', handle: 'h' })).rejects.toMatchObject({
      code: 'HANDLE_NOT_FOUND',
    });
    expect(sockets.opened).toBe(1);
    await executor.execute(TRIVIAL);
    await executor.closeHandles('none');
    expect(sockets.opened).toBe(2);
    await executor.dispose();
  });
});
