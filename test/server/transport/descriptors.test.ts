/**
 * A daemon that outlives its file descriptors (issue 41). Under `ulimit -n 256`, a client opens
 * 400 connections, below `--max-connections 512`: the daemon sheds those that would leave its
 * pool fewer than SHED_HEADROOM descriptors (503, a log line naming the limit and `ulimit -n`, a
 * metric), so a spinning run's process is still replaced, and it takes connections again once
 * they close. Before, every connection was taken until EMFILE, and the process that replaced a
 * killed one could not start (or its spawn's unheard 'error' ended the daemon).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { connect } from '../../../src/remote/index.js';
import { DescriptorWatch, maxConnectionsFor, SHED_HEADROOM } from '../../../src/server/transport/descriptors.js';
import { NodeWebSocket, rejection } from '../../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons } from '../../support/daemon.js';

afterAll(stopAllDaemons);

const FD_LIMIT = 256;
const CONNECTIONS = 400;
/** Below --max-unauthenticated-per-peer (32): the flood is shed for descriptors, not per address. */
const AT_ONCE = 16;

/** Opens a WebSocket; resolves with it once open, or undefined once refused or closed. */
function open(url: string): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', () => resolve(undefined));
    socket.once('close', () => resolve(undefined));
  });
}

describe('maxConnectionsFor, the default of --max-connections', () => {
  it('is half the descriptors beyond the reserve, from 1 to 512', () => {
    expect([256, 1024, 1088, 65_536, 64, undefined].map(maxConnectionsFor)).toEqual([96, 480, 512, 512, 1, 512]);
  });
});

describe('DescriptorWatch', () => {
  it('counts again near the limit, and sheds the connection that would leave fewer than the headroom', () => {
    let now = 0;
    let others = 100;
    const watch = new DescriptorWatch({ limit: () => 256, count: () => others + sockets, now: () => now });
    let sockets = 1;
    expect(watch.short(sockets)).toBeUndefined();
    // Far from the limit, it is not counted again within the second: the pool's growth is unseen.
    others = 200;
    now = 500;
    sockets = 2;
    expect(watch.short(sockets)).toBeUndefined();
    now = 1_000;
    expect(watch.short(sockets)).toBeUndefined();
    sockets = 256 - SHED_HEADROOM - 200 + 1;
    now = 1_001;
    expect(watch.short(sockets)).toEqual({ open: 256 - SHED_HEADROOM + 1, limit: 256 });
    // Out of descriptors, the count itself fails: the limit is taken as reached.
    const starved = new DescriptorWatch({ limit: () => 256, count: (limit) => limit, now: () => 0 });
    expect(starved.short(1)).toEqual({ open: 256, limit: 256 });
  });
});

describe(`a daemon under ulimit -n ${FD_LIMIT}`, () => {
  it(`sheds connections before its descriptors run out, replaces a killed process, and takes connections again`, {
    timeout: 120_000,
  }, async () => {
    const daemon = await startAdminDaemon(['--max-connections', '512', '--timeout', '1000', '--spare', '1'], {
      fdLimit: FD_LIMIT,
    });
    const client = await connect(daemon.url, { websocket: NodeWebSocket });
    const flood: WebSocket[] = [];
    try {
      await expect(client.execute({ code: 'async () => 1' })).resolves.toMatchObject({ result: 1 });
      for (let sent = 0; sent < CONNECTIONS; sent += AT_ONCE) {
        const batch = await Promise.all(Array.from({ length: AT_ONCE }, () => open(daemon.url)));
        flood.push(...batch.filter((socket) => socket !== undefined));
      }
      const shed = await metricValue(daemon, 'codemode_executor_sessions_refused_total{reason="descriptors"}');
      expect(flood.length).toBeLessThan(CONNECTIONS);
      expect(shed).toBe(CONNECTIONS - flood.length);
      expect(await metricValue(daemon, 'codemode_executor_descriptor_limit')).toBe(FD_LIMIT);
      expect(await metricValue(daemon, 'codemode_executor_open_descriptors')).toBeLessThanOrEqual(
        FD_LIMIT - SHED_HEADROOM + 1,
      );
      // A client shed is told 503, and that the daemon may be short of descriptors.
      const shedClient = await rejection(connect(daemon.url, { websocket: NodeWebSocket }));
      expect([shedClient.code, shedClient.retryable]).toEqual(['CONNECTION_REJECTED', true]);
      expect(shedClient.message).toMatch(/not taking new sessions \(HTTP 503\): .*short of file descriptors/);
      const refused = await daemon.waitForLine(/^connection refused from .*file descriptors/);
      expect(refused).toMatch(
        /: the daemon holds \d+ of the 256 file descriptors it may open \(ulimit -n\) and keeps the last 32 for its sandbox processes, .*before EMFILE.*raise `ulimit -n` or lower --max-connections/,
      );

      // A spinning run's process is killed and replaced, and the next run has one.
      await expect(client.execute({ code: 'async () => { for (;;) {} }' })).resolves.toMatchObject({
        error: expect.stringMatching(/timed out/),
      });
      await expect(client.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
      expect(await metricValue(daemon, 'codemode_executor_descriptor_faults_total{where="spawn"}')).toBe(0);

      // Once the flood goes, new connections are taken again.
      await Promise.all(
        flood.splice(0).map((socket) => new Promise((resolve) => (socket.once('close', resolve), socket.close()))),
      );
      const after = await connect(daemon.url, { websocket: NodeWebSocket });
      await expect(after.execute({ code: 'async () => 43' })).resolves.toMatchObject({ result: 43 });
      await after.dispose();
      expect(daemon.child.exitCode).toBeNull();
    } finally {
      for (const socket of flood) socket.terminate();
      await client.dispose();
    }
  });
});
