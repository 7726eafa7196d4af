/**
 * Retained executions outlive their connection, and keep counting against the token that made
 * them (issue 30, finding 9): a client that retains, disconnects and reconnects to retain more is
 * refused past --max-retained-per-tenant, naming it, while another token retains as before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/remote/index.js';
import { formatTooManyRetainedForTenant } from '../../../src/server/texts.js';
import { NodeWebSocket, rejection } from '../../support/client.js';
import { startDaemon, stopAllDaemons } from '../../support/daemon.js';

afterAll(stopAllDaemons);

const RETAIN = { code: 'async () => ({ next: async () => 1 })', retainHandles: true } as const;

describe('--max-retained-per-tenant', () => {
  it('counts retained executions against their token across connections, open or gone', {
    timeout: 120_000,
  }, async () => {
    const daemon = await startDaemon([
      '--token',
      'tenant-a',
      '--token',
      'tenant-b',
      '--max-retained-per-connection',
      '2',
      '--max-retained-per-tenant',
      '3',
      '--max-workers',
      '4',
    ]);
    const open = (token: string) => connect(daemon.url, { websocket: NodeWebSocket, token });

    // The first connection retains its two, then goes away: they stay, counted against tenant-a.
    const first = await open('tenant-a');
    for (let i = 0; i < 2; i += 1) expect((await first.execute(RETAIN)).executionId).toBeDefined();
    await first.dispose();

    const second = await open('tenant-a');
    const third = await second.execute(RETAIN);
    expect(third.executionId).toBeDefined();
    const refused = await rejection(second.execute(RETAIN));
    expect([refused.code, refused.message]).toEqual(['LIMIT_EXCEEDED', formatTooManyRetainedForTenant(3)]);
    expect(refused.message).toContain('(--max-retained-per-tenant, maxRetainedPerTenant)');

    // Another token is a tenant of its own.
    const other = await open('tenant-b');
    expect((await other.execute(RETAIN)).executionId).toBeDefined();

    // Closing one frees a place for its tenant.
    await second.closeHandles(third.executionId!);
    expect((await second.execute(RETAIN)).executionId).toBeDefined();
    await second.dispose();
    await other.dispose();
  });
});
