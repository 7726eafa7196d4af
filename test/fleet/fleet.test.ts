/**
 * Three real daemons behind a real HAProxy running the shipped deploy/haproxy.cfg (only the
 * listening addresses moved to loopback ports). connect() goes to HAProxy; each daemon is then
 * killed or drained in turn, and the survivors, the metrics and the process table are checked.
 * HAProxy sends each daemon a PROXY protocol v2 header (`send-proxy-v2`), so the per-peer bounds
 * count each client by its own address.
 */
import { once } from 'node:events';
import { connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { connect, type RemoteExecutor } from '../../src/remote/index.js';
import { NodeWebSocket, rejection, toolGate } from '../support/client.js';
import {
  type AdminDaemon,
  adminGet,
  metricValue,
  startAdminDaemon,
  stopAllDaemons,
  waitUntil,
} from '../support/daemon.js';
import { isAlive, waitFor, workerdDescendants } from '../support/processes.js';
import { type RunningHaproxy, startHaproxy } from './support/haproxy.js';

const TRIVIAL = { code: 'async () => 42' };
/** A modest pool per daemon: the machine's two cores are shared. */
const WORKERS = 2;
const POOL = ['--max-workers', String(WORKERS), '--spare', '0'];
const EXECUTORS = 12;
/** Low enough that one client's held sockets reach it on every daemon. */
const PER_PEER = 2;
const PER_EXECUTOR = 5;

let daemons: AdminDaemon[];
let haproxy: RunningHaproxy;
const executors: RemoteExecutor[] = [];
/** Which daemon each executor's session is on, learned from the daemon id in a retained execution's id. */
const placement = new Map<RemoteExecutor, AdminDaemon>();
const retainedOn = new Map<AdminDaemon, { executionId: string; handle: string }>();

/** Every sandbox process seen under a daemon, to prove at the end that none outlived the test. */
const sandboxes = new Set<number>();
function noteSandboxes(): void {
  for (const daemon of daemons) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      for (const pid of workerdDescendants(daemon.child.pid!)) sandboxes.add(pid);
    }
  }
}

function okLines(daemon: AdminDaemon): number {
  return daemon.lines.filter((line) => / execute \d+ ok in \d+ ms$/.test(line)).length;
}

async function waitForStatus(names: string[], status: string): Promise<void> {
  for (;;) {
    const statuses = await haproxy.statuses();
    if (names.every((name) => statuses.get(name)?.startsWith(status))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Retains one execution and reads the daemon it ran on from its id (`<id>@<daemon id>`). */
async function locate(executor: RemoteExecutor): Promise<AdminDaemon> {
  const { executionId, result } = await executor.execute({ code: 'async () => ({ f: () => 7 })', retainHandles: true });
  const owner = executionId!.slice(executionId!.lastIndexOf('@') + 1);
  const daemon = daemons.find((candidate) => owner === `fleet-${daemons.indexOf(candidate) + 1}`)!;
  expect(daemon).toBeDefined();
  const handle = (result as { f: Record<string, string> }).f.__codemode_handle__!;
  if (!retainedOn.has(daemon)) retainedOn.set(daemon, { executionId: executionId!, handle });
  return daemon;
}

beforeAll(async () => {
  daemons = await Promise.all(
    [1, 2, 3].map((n) =>
      startAdminDaemon([
        ...POOL,
        '--daemon-id',
        `fleet-${n}`,
        '--drain-timeout-ms',
        '60000',
        '--proxy-protocol',
        '--max-unauthenticated-per-peer',
        String(PER_PEER),
      ]),
    ),
  );
  await Promise.all(
    daemons.map(async (daemon) => {
      while ((await adminGet(daemon, '/readyz')).status !== 200) await new Promise((r) => setTimeout(r, 100));
    }),
  );
  haproxy = await startHaproxy(daemons.map((daemon) => ({ port: daemon.port, adminPort: daemon.adminPort })));
  await waitForStatus(['daemon-1', 'daemon-2', 'daemon-3'], 'UP');
}, 180_000);

afterAll(async () => {
  await Promise.all(executors.map((executor) => executor.dispose()));
  await haproxy?.stop();
  await stopAllDaemons();
});

describe('a fleet of three daemons behind HAProxy', () => {
  it('spreads 60 executions through connect() over the three', async () => {
    for (let i = 0; i < EXECUTORS; i += 1) {
      const executor = await connect(haproxy.url, { websocket: NodeWebSocket, backoffMs: 50 });
      executors.push(executor);
      placement.set(executor, await locate(executor));
    }
    const before = daemons.map(okLines);
    const results = await Promise.all(
      executors.flatMap((executor) => Array.from({ length: PER_EXECUTOR }, () => executor.execute(TRIVIAL))),
    );
    expect(results.map((result) => result.result)).toEqual(Array(EXECUTORS * PER_EXECUTOR).fill(42));
    await waitUntil(() => daemons.reduce((sum, daemon, i) => sum + okLines(daemon) - before[i]!, 0) === 60);
    const spread = daemons.map((daemon, i) => okLines(daemon) - before[i]!);
    expect(spread.every((count) => count > 0)).toBe(true);
    // Every executor's sessions stayed on its daemon (the affinity header), so each ran 5 there.
    for (const [executor, daemon] of placement) {
      expect(executors.includes(executor)).toBe(true);
      expect(spread[daemons.indexOf(daemon)]! % PER_EXECUTOR).toBe(0);
    }
  }, 120_000);

  it("applies the per-peer bound to each client's own address, not HAProxy's", async () => {
    // One client holds sockets that never upgrade (a plain GET, kept alive): 15 over three daemons
    // put at least 5 on one, past its bound of 2 per peer.
    const held = await Promise.all(
      Array.from({ length: 15 }, async () => {
        const { port } = new URL(haproxy.url);
        const socket = tcpConnect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.3' });
        socket.on('error', () => {});
        await once(socket, 'connect');
        socket.write('GET / HTTP/1.1\r\nHost: fleet\r\n\r\n');
        return socket;
      }),
    );
    try {
      const refused = /^connection refused from (\S+): (\S+) already holds \d+ sockets? not yet upgraded/;
      await waitUntil(() => daemons.some((daemon) => daemon.lines.some((line) => refused.test(line))));
      const refusals = daemons.flatMap((daemon) => daemon.lines.filter((line) => refused.test(line)));
      for (const line of refusals) {
        const [, peer, address] = refused.exec(line)!;
        expect([peer!.replace(/:\d+$/, ''), address]).toEqual(['127.0.0.3', '127.0.0.3']);
      }
      // Another client, from its own address, is not held back by them.
      class FromElsewhere extends WebSocket {
        constructor(url: string, options?: WebSocket.ClientOptions) {
          super(url, { ...options, localAddress: '127.0.0.2' });
        }
      }
      const opened = daemons.map((daemon) => daemon.lines.length);
      const other = await connect(haproxy.url, { websocket: FromElsewhere, backoffMs: 50 });
      try {
        await expect(other.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
      } finally {
        await other.dispose();
      }
      const openedLines = daemons.flatMap((daemon, i) =>
        daemon.lines.slice(opened[i]).filter((line) => / opened from /.test(line)),
      );
      expect(openedLines.length).toBeGreaterThan(0);
      for (const line of openedLines) expect(line).toMatch(/^connection \d+ opened from 127\.0\.0\.2:\d+$/);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it('SIGKILL of one daemon mid-run: its in-flight calls break with no replay, the next ones succeed elsewhere', async () => {
    noteSandboxes();
    const victim = daemons[0]!;
    const onVictim = executors.filter((executor) => placement.get(executor) === victim);
    expect(onVictim.length).toBeGreaterThan(0);
    // No more held executions than the daemon has sandbox processes, so every one is running.
    const held = onVictim.slice(0, WORKERS);
    const gates = held.map(() => toolGate());
    const inFlight = held.map((executor, i) =>
      executor.execute({ code: gates[i]!.code, providers: [gates[i]!.provider], dispatch: gates[i]!.dispatch }),
    );
    await Promise.all(gates.map((gate) => gate.reached));
    noteSandboxes();
    victim.kill('SIGKILL');
    for (const error of await Promise.all(inFlight.map(rejection))) {
      expect([error.code, error.message, error.retryable]).toEqual([
        'CONNECTION_BROKEN',
        'Executor connection broke during execution',
        true,
      ]);
    }
    for (const gate of gates) gate.open();
    // Each broken call reached its tool once: it was not sent again anywhere.
    expect(gates.map((gate) => gate.calls)).toEqual(gates.map(() => 1));
    const survivors = daemons.slice(1);
    const before = survivors.map(okLines);
    for (const executor of onVictim) {
      await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
      placement.set(executor, await locate(executor));
      expect(survivors).toContain(placement.get(executor));
    }
    // Two executions per executor there: the trivial one, and the retained one that locates it.
    const ranElsewhere = () => survivors.reduce((sum, daemon, i) => sum + okLines(daemon) - before[i]!, 0);
    await waitUntil(() => ranElsewhere() === 2 * onVictim.length);

    // A handle retained on the dead daemon is named as living there, from wherever the call lands.
    const lost = retainedOn.get(victim)!;
    const error = await rejection(onVictim[0]!.invokeHandle({ executionId: lost.executionId, handle: lost.handle }));
    expect(error.code).toBe('HANDLE_NOT_FOUND');
    expect(error.message).toMatch(
      /^Execution ".*@fleet-1" is retained by the executor daemon "fleet-1", not by this one \("fleet-[23]"\)/,
    );
    await waitForStatus(['daemon-1'], 'DOWN');
  }, 120_000);

  it('SIGTERM of another: /readyz turns 503, its running executions finish, new ones go elsewhere, it exits 0', async () => {
    const draining = daemons[1]!;
    const survivor = daemons[2]!;
    const onDraining = executors.filter((executor) => placement.get(executor) === draining);
    expect(onDraining.length).toBeGreaterThan(0);
    const held = onDraining.slice(0, WORKERS);
    const gates = held.map(() => toolGate());
    const running = held.map((executor, i) =>
      executor.execute({ code: gates[i]!.code, providers: [gates[i]!.provider], dispatch: gates[i]!.dispatch }),
    );
    await Promise.all(gates.map((gate) => gate.reached));
    noteSandboxes();
    const drainingOkBefore = okLines(draining);
    draining.kill('SIGTERM');
    await draining.waitForLine(/^shutting down: draining \d+ running executions?$/);
    expect(await adminGet(draining, '/readyz')).toEqual({
      status: 503,
      body: 'not ready: draining, no new sessions\n',
    });
    expect((await adminGet(draining, '/healthz')).status).toBe(200);

    // New executions from the same executors run on the survivor, while the drained ones still run.
    const survivorBefore = okLines(survivor);
    for (const executor of onDraining) {
      await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    }
    await waitUntil(() => okLines(survivor) - survivorBefore === onDraining.length);
    expect(okLines(draining)).toBe(drainingOkBefore);
    const refusedBefore = await metricValue(
      draining,
      'codemode_executor_executions_total{kind="execute",outcome="refused"}',
    );
    expect(refusedBefore).toBe(onDraining.length);

    for (const gate of gates) gate.open();
    for (const result of await Promise.all(running)) expect(result).toMatchObject({ result: 'released' });
    expect(await draining.exited).toEqual({ code: 0, signal: null });
    expect(draining.lines.at(-1)).toBe('stopped');
  }, 120_000);

  it('/metrics counts what happened on the survivor', async () => {
    const survivor = daemons[2]!;
    const ok = await metricValue(survivor, 'codemode_executor_executions_total{kind="execute",outcome="ok"}');
    // Every ok line in its log is one count; the probe at start is not a client's execution.
    expect(ok).toBe(okLines(survivor));
    const sessions = await metricValue(survivor, 'codemode_executor_sessions');
    expect(sessions).toBe(executors.length);
    expect(await metricValue(survivor, 'codemode_executor_received_bytes_total')).toBeGreaterThan(0);
    expect(await metricValue(survivor, 'codemode_executor_sent_bytes_total')).toBeGreaterThan(0);
    const durations = await metricValue(
      survivor,
      'codemode_executor_execution_duration_seconds_count{kind="execute",outcome="ok"}',
    );
    expect(durations).toBe(ok);
    expect(await metricValue(survivor, 'codemode_executor_pool_members{state="starting"}')).toBe(0);
    const { body } = await adminGet(survivor, '/metrics');
    for (const line of body.split('\n').filter((candidate) => candidate !== '' && !candidate.startsWith('#'))) {
      expect(line.startsWith('codemode_executor_')).toBe(true);
    }
  });

  it('leaves nothing running', async () => {
    await Promise.all(executors.splice(0).map((executor) => executor.dispose()));
    noteSandboxes();
    expect(sandboxes.size).toBeGreaterThan(0);
    const survivor = daemons[2]!;
    survivor.kill('SIGTERM');
    expect(await survivor.exited).toEqual({ code: 0, signal: null });
    await haproxy.stop();
    expect(haproxy.child.exitCode !== null || haproxy.child.signalCode !== null).toBe(true);
    for (const daemon of daemons) expect(daemon.child.exitCode !== null || daemon.child.signalCode !== null).toBe(true);
    for (const pid of sandboxes) await waitFor(() => !isAlive(pid), `sandbox process ${pid} to end`);
  });
});
