/**
 * The daemon tried as an attacker would (issue 16's list), each against a real daemon process: a
 * client that stops reading, a flood of half-open upgrades under a low file limit, malformed wire
 * values, forged log lines, and frozen peers whose calls must not run on after the client was
 * told the connection broke.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { type Socket, connect as tcpConnect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createEnvelopeDispatch, type Dispatch, ExecutorError } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { formatLeaseExpired } from '../../src/server/texts.js';
import { NodeWebSocket, rejection } from '../support/client.js';
import { metricValue, startAdminDaemon, startDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';
import { withSlack } from '../support/machine-slack.js';
import { openRawSession } from '../support/raw-session.js';

afterAll(stopAllDaemons);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TRIVIAL = { code: 'async () => 42' };
// The frozen peers' heartbeats: a quiet machine's figures, stretched on a loaded one, where a
// daemon answers late. The lease the daemon holds a client to is their sum.
const HEARTBEAT_INTERVAL = withSlack(200);
const HEARTBEAT_TIMEOUT = withSlack(300);
const LEASE = HEARTBEAT_INTERVAL + HEARTBEAT_TIMEOUT;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) / 1024;
}

async function servesAgain(url: string): Promise<void> {
  const executor = await connect(url, { websocket: NodeWebSocket });
  try {
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
  } finally {
    await executor.dispose();
  }
}

describe('a client that stops reading', () => {
  it('is dropped once its unsent bytes pass --max-send-buffer-bytes, and its executions are cancelled', async () => {
    const daemon = await startAdminDaemon([
      '--max-send-buffer-bytes',
      String(1 << 20),
      '--max-executions-per-connection',
      '64',
    ]);
    const raw = await openRawSession(daemon.url);
    // Stop reading: from here on the kernel's buffers fill, then the daemon's.
    (raw.socket as unknown as { _socket: Socket })._socket.pause();
    const calls = Array.from({ length: 40 }, () =>
      raw.remote.execute!({ code: "async () => 'x'.repeat(1 << 20)", dispatch: null, outboundMode: 'default' }).catch(
        () => 'failed',
      ),
    );
    const dropped = await daemon.waitForLine(/^connection 1 dropped: /);
    expect(dropped).toMatch(
      /^connection 1 dropped: the client stopped reading: \d+ bytes wait to be sent, past the limit of 1048576 bytes \(--max-send-buffer-bytes\)$/,
    );
    await daemon.waitForLine(/^connection 1 closed after \d+ executions?$/);
    // The executions still queued when it was dropped were given up, not run to the end.
    const executed = daemon.lines.filter((line) => /^connection 1 execute \d+ ok /.test(line)).length;
    const cancelled = daemon.lines.filter((line) =>
      /^connection 1 execute \d+ cancelled: the client stopped reading/.test(line),
    );
    expect(executed + cancelled.length).toBeLessThanOrEqual(40);
    expect(cancelled.length).toBeGreaterThan(0);
    expect(await metricValue(daemon, 'codemode_executor_sessions_dropped_total{cause="send_buffer"}')).toBe(1);
    // Bounded: nowhere near the 40 MiB of results the client asked for, twice over.
    expect(rssMb(daemon.child.pid!)).toBeLessThan(400);
    raw.close();
    await Promise.all(calls);
    await servesAgain(daemon.url);
  });
});

describe('a flood of half-open upgrades under ulimit -n 1024', () => {
  it('holds at most --max-unauthenticated-per-peer of them, closes them at --handshake-timeout-ms, and serves others', async () => {
    // The held sockets must outlast the flood's accepting, which a loaded host slows.
    const daemon = await startAdminDaemon(['--handshake-timeout-ms', String(withSlack(2000))], { fdLimit: 1024 });
    const { port } = new URL(daemon.url);
    const flood: Socket[] = [];
    const closed: Promise<unknown>[] = [];
    const settled: Promise<unknown>[] = [];
    let connected = 0;
    for (let i = 0; i < 1100; i += 1) {
      // From another loopback address than the legitimate client's.
      const socket = tcpConnect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.2' });
      socket.on('error', () => {});
      socket.on('connect', () => {
        connected += 1;
        socket.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n');
      });
      // Not events.once: it would reject on the reset the daemon's close may cause.
      closed.push(new Promise((resolve) => socket.once('close', resolve)));
      settled.push(new Promise((resolve) => (socket.once('connect', resolve), socket.once('close', resolve))));
      flood.push(socket);
    }
    try {
      const refusedMetric = 'codemode_executor_sessions_refused_total{reason="unauthenticated_per_peer"}';
      // Every connected socket past the first 32 is closed at once. (On a loaded host the kernel's
      // accept queue may overflow, so a few of the 1,100 may never connect at all: they are not the
      // daemon's to count.)
      await Promise.all(settled);
      expect(connected).toBeGreaterThan(32);
      for (;;) {
        if ((await metricValue(daemon, refusedMetric)) === connected - 32) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Meanwhile a legitimate client connects and runs.
      await servesAgain(daemon.url);
      // The 32 that were held are closed at the handshake timeout.
      await Promise.all(closed);
      expect(await metricValue(daemon, 'codemode_executor_sessions_refused_total{reason="handshake_timeout"}')).toBe(
        32,
      );
      const logged = daemon.lines.filter((line) =>
        /^connection refused from 127\.0\.0\.2:\d+: 127\.0\.0\.2 already holds 32 sockets/.test(line),
      );
      // A flood is logged as its first lines and then counted, not written out line by line.
      expect(logged.length).toBe(10);
      expect(daemon.child.exitCode).toBeNull();
    } finally {
      for (const socket of flood) socket.destroy();
    }
  });
});

describe('malformed wire values', () => {
  it('are INVALID_REQUEST naming the field, not a raw TypeError, and the session goes on', async () => {
    const daemon = await startDaemon();
    const raw = await openRawSession(daemon.url);
    try {
      const refusal = async (call: Promise<unknown>) => {
        const error = await call.then(
          () => undefined,
          (caught: unknown) => caught as { code?: unknown; message?: unknown },
        );
        return [error?.code, error?.message];
      };
      expect(await refusal(raw.remote.execute!(null))).toEqual([
        'INVALID_REQUEST',
        'execute: the request must be an object, got null',
      ]);
      expect(await refusal(raw.remote.execute!({ code: 42, dispatch: null, outboundMode: 'default' }))).toEqual([
        'INVALID_REQUEST',
        'execute: request.code must be a string, got 42',
      ]);
      expect(await refusal(raw.remote.execute!({ code: 'c', dispatch: null, outboundMode: 'sideways' }))).toEqual([
        'INVALID_REQUEST',
        'outboundMode must be "default", "blocked" or "stub", got "sideways"',
      ]);
      expect(await refusal(raw.remote.execute!({ code: 'c', outboundMode: 'default' }))).toEqual([
        'INVALID_REQUEST',
        'execute: request.dispatch must be a function or null, got undefined',
      ]);
      const [code, message] = await refusal(
        raw.remote.execute!({ code: 'c', dispatch: null, outboundMode: 'default', extra: 1 }),
      );
      expect(code).toBe('INVALID_REQUEST');
      expect(message).toMatch(/^execute: request\.extra is not a field of the wire request; its fields are code, /);
      expect(
        await refusal(raw.remote.invokeHandle!({ executionId: 'e', handle: 'h', dispatch: null, args: [1] })),
      ).toEqual(['INVALID_REQUEST', 'invokeHandle: request.args must be an encoded array or absent, got an array']);
      expect(await refusal(raw.remote.closeHandles!(7))).toEqual([
        'INVALID_REQUEST',
        'closeHandles: executionId must be a string, got 7',
      ]);
      expect(
        await refusal(raw.remote.execute!({ code: 'c', dispatch: null, outboundMode: 'default', heartbeatLease: -1 })),
      ).toEqual([
        'INVALID_REQUEST',
        'execute: request.heartbeatLease must be a positive number of milliseconds or absent, got -1',
      ]);
      // Every refusal is logged, and the same session still runs a good request.
      await daemon.waitForLine(/^connection 1 refused execute: execute: the request must be an object, got null$/);
      await expect(
        raw.remote.execute!({ code: 'async () => 1', dispatch: null, outboundMode: 'default' }),
      ).resolves.toMatchObject({ result: 1 });
    } finally {
      raw.close();
    }
  });
});

describe('a client writing into the daemon log', () => {
  const FORGED = '2026-01-01T00:00:00.000Z info connection 9 opened from 6.6.6.6:1';

  for (const format of ['text', 'json'] as const) {
    it(`cannot start a line of its own (${format})`, async () => {
      const daemon = await startDaemon(['--log-format', format]);
      const raw = await openRawSession(daemon.url);
      try {
        // Methods any client can call, with a newline (and other line breaks) in what the daemon logs.
        await raw.remote.rejectOversizedMessage!(`\n${FORGED}`, 1).catch(() => {});
        await raw.remote.invokeHandle!({ executionId: `x@\n${FORGED}\r\u2028`, handle: 'h', dispatch: null }).catch(
          () => {},
        );
        await raw.remote.execute!({ code: 'async () => 1', dispatch: null, outboundMode: 'default' });
        await daemon.waitForLine(/ execute 1 ok /);
        const refusals = daemon.lines.filter((line) => line.startsWith('connection 1 refused '));
        expect(refusals).toHaveLength(2);
        // The forged text is there, but inside the refusal lines, never at the start of one.
        expect(daemon.lines.filter((line) => line.includes('connection 9 opened from 6.6.6.6'))).toHaveLength(1);
        expect(daemon.lines.some((line) => line.startsWith('connection 9'))).toBe(false);
        for (const line of daemon.raw) {
          if (format === 'json') expect(() => JSON.parse(line)).not.toThrow();
          else expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (info|warn) /);
          expect(line).not.toMatch(/[\r\u2028]/);
        }
      } finally {
        raw.close();
      }
    });
  }
});

describe('a daemon frozen past the client heartbeat lease (SIGSTOP)', () => {
  it('gives the call up itself on waking, before it runs on: the client was told the connection broke', async () => {
    const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
    const executor = await connect(daemon.url, {
      websocket: NodeWebSocket,
      heartbeatIntervalMs: HEARTBEAT_INTERVAL,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT,
    });
    let effects = 0;
    let ready!: () => void;
    const reached = new Promise<void>((resolve) => (ready = resolve));
    const dispatch: Dispatch = createEnvelopeDispatch(
      {
        t: (tool) => {
          if (tool === 'ready') ready();
          else effects += 1;
          return true;
        },
      },
      { active: true },
    );
    const call = executor.execute({
      code: 'async () => { await t.ready(); await new Promise((r) => setTimeout(r, 1500)); await t.effect(); return "finished" }',
      providers: [{ name: 't', tools: ['ready', 'effect'] }],
      dispatch,
      timeout: null,
    });
    await reached;
    daemon.kill('SIGSTOP');
    try {
      const error = await rejection(call);
      expect([error.code, error.retryable]).toEqual(['CONNECTION_BROKEN', true]);
      // Past the program's own pause: unstopped, the daemon would now run its next step.
      await new Promise((resolve) => setTimeout(resolve, 2000));
    } finally {
      daemon.kill('SIGCONT');
    }
    await daemon.waitForLine(/^connection 1 execute 1 cancelled: /);
    expect(daemon.lines).toContain(`connection 1 execute 1 cancelled: ${formatLeaseExpired(LEASE)}`);
    expect(daemon.lines.some((line) => /^connection 1 execute 1 (ok|returned|threw)/.test(line))).toBe(false);
    expect(effects).toBe(0);
    await executor.dispose();
    await servesAgain(daemon.url);
  });
});

describe('a client frozen past its heartbeat lease (SIGSTOP)', () => {
  it('has its calls given up by the daemon, without waiting for the WebSocket ping', async () => {
    const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
    const client = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/server/fixtures/doomed-client.ts',
        daemon.url,
        String(HEARTBEAT_INTERVAL),
        String(HEARTBEAT_TIMEOUT),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(client, 'exit');
    await new Promise<void>((resolve) =>
      client.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('in flight') && resolve()),
    );
    client.kill('SIGSTOP');
    try {
      // The daemon's ping interval is its default, 15 s: only the lease can end the call this soon.
      await daemon.waitForLine(/^connection 1 execute 1 cancelled: /);
      expect(daemon.lines).toContain(`connection 1 execute 1 cancelled: ${formatLeaseExpired(LEASE)}`);
      await servesAgain(daemon.url);
    } finally {
      client.kill('SIGKILL');
      await exited;
    }
  });
});

describe('--max-connections', () => {
  it('refuses one session more with a text that sends connect() elsewhere, and logs it', async () => {
    const daemon = await startAdminDaemon(['--max-connections', '1']);
    const first = await connect(daemon.url, { websocket: NodeWebSocket });
    const error = await rejection(
      connect(daemon.url, { websocket: NodeWebSocket, maxReconnectAttempts: 1, backoffMs: 1 }),
    );
    expect([error.code, error.retryable]).toEqual(['CONNECTION_REJECTED', true]);
    expect(error.message).toMatch(/is not taking new sessions \(HTTP 503\)/);
    await daemon.waitForLine(
      /^connection refused from 127\.0\.0\.1:\d+: the daemon already has 1 open session, its limit \(--max-connections\)/,
    );
    expect(await metricValue(daemon, 'codemode_executor_sessions_refused_total{reason="max_connections"}')).toBe(2);
    await first.dispose();
    await waitUntil(() => daemon.lines.some((line) => line === 'connection 1 closed after 0 executions'));
    await servesAgain(daemon.url);
    expect(error).toBeInstanceOf(ExecutorError);
  });
});
