/**
 * The bytes queued requests hold in the daemon are bounded (issue 30, finding 8): with the pool
 * busy, one connection's requests past --max-held-request-bytes are refused with LIMIT_EXCEEDED,
 * and all connections' past --max-held-request-bytes-total with QUEUE_FULL, each naming its flag.
 * What the daemon holds is read from its own account (/metrics), not from its RSS.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecuteResult } from '../../../src/protocol/index.js';
import { connect } from '../../../src/remote/index.js';
import { NodeWebSocket, rejection, toolGate } from '../../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons } from '../../support/daemon.js';
import { waitFor } from '../../support/processes.js';

afterAll(stopAllDaemons);

const MIB = 1024 * 1024;
const PER_CONNECTION = 4 * MIB;
const TOTAL = 6 * MIB;
/** A request that holds a little over 1 MiB: a module of that much text, which the program never imports. */
const bigRequest = (tag: number) => ({
  code: `async () => ${tag}`,
  modules: { 'ballast.js': `export const ballast = "${'x'.repeat(MIB)}";` },
});

describe('the bytes held by queued requests', () => {
  it('are bounded per connection and for the daemon, and refusals name the flag', { timeout: 120_000 }, async () => {
    // One sandbox process (the lean defaults), held by a run waiting on the test's gate: the rest queue.
    // No module cache: each ballast crosses inline, and each queued request holds its own copy
    // (a cached module is named by hash and held once, by the cache: docs/protocol.md).
    const daemon = await startAdminDaemon([
      '--max-held-request-bytes',
      String(PER_CONNECTION),
      '--max-held-request-bytes-total',
      String(TOTAL),
      '--max-module-cache-bytes',
      '0',
    ]);
    const held = () => metricValue(daemon, 'codemode_executor_held_request_bytes');
    // Concurrent calls of one client may cross in any order (each hashes its ballast first, off the
    // main thread), so the test waits for the ones meant to queue before it sends the one meant to be refused.
    const untilHeld = (atLeast: number) =>
      waitFor(async () => (await held()) >= atLeast, `the daemon to hold ${atLeast} bytes`);
    const first = await connect(daemon.url, { websocket: NodeWebSocket });
    const second = await connect(daemon.url, { websocket: NodeWebSocket });
    const gate = toolGate();
    try {
      const holder = first.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
      await gate.reached;

      // One connection: three queue (about 3 MiB), the fourth would pass 4 MiB.
      const queued: Promise<ExecuteResult>[] = [];
      for (let tag = 1; tag <= 3; tag += 1) queued.push(first.execute(bigRequest(tag)));
      await untilHeld(3 * MIB);
      const perConnection = await rejection(first.execute(bigRequest(4)));
      expect(perConnection.code).toBe('LIMIT_EXCEEDED');
      expect(perConnection.message).toMatch(
        /per-connection limit of 4194304 bytes \(--max-held-request-bytes, maxHeldRequestBytes\)/,
      );

      // The daemon: the second connection may queue two more (about 5 MiB in all), not a third.
      for (let tag = 5; tag <= 6; tag += 1) queued.push(second.execute(bigRequest(tag)));
      await untilHeld(5 * MIB);
      const total = await rejection(second.execute(bigRequest(7)));
      expect([total.code, total.retryable]).toEqual(['QUEUE_FULL', true]);
      expect(total.message).toMatch(
        /its limit of 6291456 bytes \(--max-held-request-bytes-total, maxHeldRequestBytesTotal\)/,
      );

      // A flood changes nothing: each further request is refused, and what is held stays within the bound.
      const flood = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => first.execute(bigRequest(100 + i))));
      expect(flood.every((outcome) => outcome.status === 'rejected')).toBe(true);
      const heldNow = await held();
      expect(heldNow).toBeGreaterThan(5 * MIB);
      expect(heldNow).toBeLessThanOrEqual(TOTAL);
      expect(await metricValue(daemon, 'codemode_executor_held_request_bytes_limit{scope="connection"}')).toBe(
        PER_CONNECTION,
      );
      expect(await metricValue(daemon, 'codemode_executor_held_request_bytes_limit{scope="daemon"}')).toBe(TOTAL);
      expect(
        await metricValue(daemon, 'codemode_executor_held_request_bytes_refused_total{scope="connection"}'),
      ).toBeGreaterThanOrEqual(41);
      expect(await metricValue(daemon, 'codemode_executor_held_request_bytes_refused_total{scope="daemon"}')).toBe(1);

      // The queued ones were admitted whole: once the pool is free they all run, and nothing is held.
      gate.open();
      await expect(holder).resolves.toMatchObject({ result: 'released' });
      const results = await Promise.all(queued);
      expect(results.map((result) => result.result)).toEqual([1, 2, 3, 5, 6]);
      expect(await held()).toBe(0);
    } finally {
      gate.open();
      await first.dispose();
      await second.dispose();
    }
  });
});
