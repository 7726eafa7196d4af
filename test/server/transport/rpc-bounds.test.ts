/**
 * An authenticated client that floods its own capnweb session (issue 22, finding 4), against a real
 * daemon process: pipes, calls whose answers it never pulls, stubs by the thousand. Each time that
 * connection is closed with a logged reason naming its bound, the daemon lives, a neighbour's run
 * completes and /healthz answers. Every flood is bounded in messages and in time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/remote/index.js';
import { NodeWebSocket } from '../../support/client.js';
import { type AdminDaemon, adminGet, metricValue, startAdminDaemon, stopAllDaemons } from '../../support/daemon.js';
import { closedWithin, type Flood, flood, openRawSocket } from '../support/flood.js';

afterAll(stopAllDaemons);

const FLOOD_TIME_LIMIT = 40_000;

/** The daemon is alive and serves: /healthz answers, and a neighbour's run completes. */
async function neighbourServed(daemon: AdminDaemon): Promise<void> {
  expect(daemon.child.exitCode).toBeNull();
  const health = await adminGet(daemon, '/healthz');
  expect(health.status).toBe(200);
  const neighbour = await connect(daemon.url, { websocket: NodeWebSocket });
  try {
    await expect(neighbour.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
  } finally {
    await neighbour.dispose();
  }
}

/**
 * Runs the flood with a neighbour beside it: the neighbour's session opens first, its run starts
 * with the flood, and /healthz is asked while the flood goes on. All must be served.
 */
async function floodBesideNeighbour(daemon: AdminDaemon, attack: () => Promise<Flood>): Promise<Flood> {
  const neighbour = await connect(daemon.url, { websocket: NodeWebSocket });
  try {
    const run = neighbour.execute({ code: 'async () => { await new Promise((r) => setTimeout(r, 300)); return 42 }' });
    const flooding = attack();
    const health = await adminGet(daemon, '/healthz');
    const [result, sent] = await Promise.all([run, flooding]);
    expect(health.status).toBe(200);
    expect(result).toMatchObject({ result: 42 });
    return sent;
  } finally {
    await neighbour.dispose();
  }
}

describe('a session flooded by its own client', () => {
  it('is closed at the first capnweb "pipe" message, which the executor protocol never sends', async () => {
    const daemon = await startAdminDaemon();
    const socket = await openRawSocket(daemon.url);
    // The measured attack: 520,000 tiny pipes grew the heap until V8 aborted.
    const sent = await floodBesideNeighbour(daemon, () => flood(socket, () => '["pipe"]', 520_000, FLOOD_TIME_LIMIT));
    expect(await closedWithin(socket, 5_000)).toBe(true);
    expect(sent.sent).toBeLessThan(520_000);
    const dropped = await daemon.waitForLine(/^connection 1 dropped: /);
    expect(dropped).toBe(
      'connection 1 dropped: the client sent a capnweb "pipe" message, which opens a stream; the executor protocol passes no streams',
    );
    expect(await metricValue(daemon, 'codemode_executor_sessions_dropped_total{cause="rpc_message"}')).toBe(1);
    await neighbourServed(daemon);
  });

  it('is closed once the calls it never pulls pass --max-rpc-exports', async () => {
    const daemon = await startAdminDaemon();
    const socket = await openRawSocket(daemon.url);
    // Each push is a heartbeat() call whose answer stays in the export table until released.
    const sent = await floodBesideNeighbour(daemon, () =>
      flood(socket, () => '["push",["pipeline",0,["heartbeat"],[]]]', 200_000, FLOOD_TIME_LIMIT),
    );
    expect(await closedWithin(socket, 5_000)).toBe(true);
    expect(sent.sent).toBeLessThan(200_000);
    const dropped = await daemon.waitForLine(/^connection 1 dropped: /);
    expect(dropped).toMatch(
      /^connection 1 dropped: the session's capnweb export table holds (\d+) entries, past the limit of 8192 \(--max-rpc-exports\)$/,
    );
    const held = Number(/holds (\d+) entries/.exec(dropped)![1]);
    // Counted every 32 messages: never far past the bound.
    expect(held).toBeLessThanOrEqual(8192 + 33);
    expect(await metricValue(daemon, 'codemode_executor_sessions_dropped_total{cause="rpc_exports"}')).toBe(1);
    await neighbourServed(daemon);
  });

  it('is closed once the stubs it passes pass --max-rpc-imports, and its running call is given up', async () => {
    const daemon = await startAdminDaemon(['--max-rpc-imports', '1000']);
    const socket = await openRawSocket(daemon.url);
    // One execute that waits, with 2,000 stubs in an extra argument: they stay imported while it runs.
    const request = {
      code: 'async () => { await new Promise((resolve) => setTimeout(resolve, 20000)); return 1 }',
      dispatch: null,
      outboundMode: 'default',
    };
    const stubs = Array.from({ length: 2_000 }, (_, i) => ['export', -(i + 1)]);
    const call = JSON.stringify(['push', ['pipeline', 0, ['execute'], [request, [stubs]]]]);
    // The count is taken before the session reads its next message: a heartbeat follows.
    const sent = await flood(
      socket,
      (i) => (i === 0 ? call : '["push",["pipeline",0,["heartbeat"],[]]]'),
      100,
      FLOOD_TIME_LIMIT,
    );
    expect(sent.sent).toBeGreaterThan(1);
    expect(await closedWithin(socket, 10_000)).toBe(true);
    const dropped = await daemon.waitForLine(/^connection 1 dropped: /);
    expect(dropped).toMatch(
      /^connection 1 dropped: the session's capnweb import table holds \d+ entries, past the limit of 1000 \(--max-rpc-imports\)$/,
    );
    await daemon.waitForLine(/^connection 1 execute 1 cancelled: the session's capnweb import table/);
    expect(await metricValue(daemon, 'codemode_executor_sessions_dropped_total{cause="rpc_imports"}')).toBe(1);
    await neighbourServed(daemon);
  });
});
