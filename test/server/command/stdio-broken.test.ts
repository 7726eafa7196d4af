/**
 * Losing the log reader must not end the daemon (issue 30, finding 7): the real CLI writes its log
 * to a real pipe whose reading end the test closes, then serves an execution over a real
 * connection, and counts the lines it dropped in /metrics.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/remote/index.js';
import { NodeWebSocket } from '../../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons, waitUntil } from '../../support/daemon.js';

afterAll(stopAllDaemons);

describe('a daemon whose stdout reader goes away', () => {
  it('keeps serving, drops its log lines and counts them', { timeout: 60_000 }, async () => {
    const daemon = await startAdminDaemon();
    // The reading end of the daemon's stdout closes, as when `serve | tee` ends.
    daemon.child.stdout.destroy();
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      // Each execution logs lines (the connection, the execution), each one a write into the broken pipe.
      for (let round = 0; round < 3; round += 1)
        await expect(executor.execute({ code: 'async () => 6 * 7' })).resolves.toMatchObject({ result: 42 });
    } finally {
      await executor.dispose();
    }
    expect(daemon.child.exitCode).toBeNull();
    const dropped = () => metricValue(daemon, 'codemode_executor_log_lines_dropped_total{stream="stdout"}');
    expect(await dropped()).toBeGreaterThanOrEqual(3);
    // The failure is told once on stderr, which still has its reader.
    await waitUntil(() => daemon.stderr.join('').includes('stdout failed (EPIPE)'));
    // Still serving after the lines were dropped: a second connection runs too.
    const second = await connect(daemon.url, { websocket: NodeWebSocket });
    await expect(second.execute({ code: 'async () => 1' })).resolves.toMatchObject({ result: 1 });
    await second.dispose();
    expect(daemon.child.exitCode).toBeNull();
  });
});
