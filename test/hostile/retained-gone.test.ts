/**
 * Retained executions whose connection has gone count against their token's share of the memory
 * budget (issue 41), whether or not anyone is connected. A tenant retains twelve executions of
 * 40 MB each and disconnects: at the next readings, those past its share (--tenant-memory-percent
 * 50 of the 720 MB an 800 MB budget lets the pool grow into: 360 MB) are evicted, largest first,
 * and a later call to one says why. Before, they pinned about 610 MB, with no one connected, until
 * their idle time-to-live (300 s).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { HANDLE_KEY } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons } from '../support/daemon.js';

afterAll(stopAllDaemons);

const RETAINS = 12;
const MIB = 2 ** 20;
const SHARE_MB = 0.5 * 0.9 * 800;
/** The pages every process maps from the workerd binary, counted once beside the share (measured 34 MB). */
const SHARED_PAGES_MB = 40;
const RETAIN = {
  code: 'async () => { const ballast = new Uint8Array(40 * 1024 * 1024).fill(1); return { size: async () => ballast.length } }',
  retainHandles: true,
} as const;

describe("a tenant's retained executions after its connection has gone", () => {
  it('are held to its share of the memory budget, with no one connected', { timeout: 180_000 }, async () => {
    const daemon = await startAdminDaemon([
      '--token',
      'gone-token',
      '--token',
      'other-token',
      '--memory-budget-mb',
      '800',
      '--max-workers',
      '16',
      '--spare',
      '0',
      '--max-retained-per-connection',
      '16',
    ]);
    const used = () => metricValue(daemon, 'codemode_executor_pool_memory_used_bytes');
    const gone = await connect(daemon.url, { websocket: NodeWebSocket, token: 'gone-token' });
    const handles: { executionId: string; handle: string }[] = [];
    for (let i = 0; i < RETAINS; i += 1) {
      const { executionId, result } = await gone.execute(RETAIN);
      expect(executionId).toBeDefined();
      handles.push({
        executionId: executionId!,
        handle: (result as { size: Record<string, string> }).size[HANDLE_KEY]!,
      });
    }
    // Connected, and alone, it may hold them all: the readings (every 500 ms) show them.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const whileConnected = await used();
    expect(whileConnected).toBeGreaterThan((SHARE_MB + SHARED_PAGES_MB + 40) * MIB);
    await gone.dispose();

    // No one is connected now; within a few readings the tenant is back within its share.
    let after = whileConnected;
    for (let reading = 0; reading < 40 && after > (SHARE_MB + SHARED_PAGES_MB) * MIB; reading += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = await used();
    }
    console.log(
      `retained after a disconnect: ${(whileConnected / MIB).toFixed(0)} MB while connected, ${(after / MIB).toFixed(0)} MB once gone (share ${SHARE_MB} MB)`,
    );
    expect(after).toBeLessThanOrEqual((SHARE_MB + SHARED_PAGES_MB) * MIB);
    expect(await metricValue(daemon, 'codemode_executor_retained_held{connection="gone"}')).toBeLessThan(RETAINS);

    // Reconnected, an evicted one says why; those within the share are still there.
    const back = await connect(daemon.url, { websocket: NodeWebSocket, token: 'gone-token' });
    const outcomes = await Promise.all(
      handles.map(({ executionId, handle }) =>
        back.invokeHandle({ executionId, handle, args: [] }).then(
          (result) => ({ ok: result.result === 40 * MIB, message: '' }),
          (error: Error) => ({ ok: false, message: error.message }),
        ),
      ),
    );
    const evicted = outcomes.filter((outcome) => !outcome.ok);
    expect(evicted.length).toBeGreaterThan(0);
    expect(outcomes.some((outcome) => outcome.ok)).toBe(true);
    for (const { message } of evicted)
      expect(message).toMatch(
        /was evicted, and its process ended: its tenant's connections had all closed, .*--tenant-memory-percent/,
      );
    await back.dispose();
  });
});
