/**
 * The daemon's token is its tenant at the tenant level (`--runs-per-member`): the executions of
 * one token's connections share a member, each in its own isolate, and another token's never join
 * them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecuteResult } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { adminGet, metricValue, startAdminDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';
import { toolGate } from '../support/tool-gate.js';

afterAll(stopAllDaemons);

const BUSY = 'codemode_executor_pool_members{state="busy"}';

describe("the daemon's tenant level", () => {
  it("runs one token's executions in one member, over two connections, and another token's in another", {
    timeout: 120_000,
  }, async () => {
    const daemon = await startAdminDaemon([
      '--token',
      'one',
      '--token',
      'two',
      '--runs-per-member',
      '4',
      '--max-workers',
      '4',
      '--spare',
      '0',
    ]);
    const held = toolGate();
    // Said when a count is off: every pool metric, members by state and spawns among them (it failed once on CI, at 2 busy for 1).
    const poolMetrics = async () =>
      (await adminGet(daemon, '/metrics')).body
        .split('\n')
        .filter((line) => line.startsWith('codemode_executor_pool'))
        .join('\n');
    const clients = await Promise.all(
      ['one', 'one', 'two'].map((token) => connect(daemon.url, { websocket: NodeWebSocket, token })),
    );
    // Settled in `finally` too: a failed expectation leaves them to reject when the clients close.
    const runs: Promise<ExecuteResult>[] = [];
    try {
      const [first, second, other] = clients;
      runs.push(first!.execute(held.request), second!.execute(held.request));
      await waitUntil(() => held.waiting() === 2);
      expect(await metricValue(daemon, BUSY), await poolMetrics()).toBe(1);
      runs.push(other!.execute(held.request));
      await waitUntil(() => held.waiting() === 3);
      expect(await metricValue(daemon, BUSY), await poolMetrics()).toBe(2);
      held.open();
      expect((await Promise.all(runs)).map((outcome) => outcome.result)).toEqual(['through', 'through', 'through']);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
      await Promise.allSettled(runs);
    }
  });
});
