/**
 * The heartbeat lease on the daemon's side, on one Connection: the first message after a silence
 * past the lease gives the calls up at once, before anything else runs (a daemon waking from a
 * freeze reads its sockets before its timers), while silence with no call running counts for nothing.
 */
import { describe, expect, it } from 'vitest';
import { Connection } from '../../../src/server/calls/connection.js';
import { formatLeaseExpired } from '../../../src/server/texts.js';
import { idleServerContext } from '../support/server-context.js';

/** Holds this thread, as a frozen process would: no timer can run meanwhile. */
function block(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until);
}

describe('the heartbeat lease', () => {
  it('is checked on the first message after a silence past it, before any timer could run', async () => {
    const lines: string[] = [];
    const drops: string[] = [];
    const connection = new Connection(1, idleServerContext(lines), (reason) => drops.push(reason));
    let signal: AbortSignal | undefined;
    const call = connection.run('execute', { heartbeatLease: 50 }, (given) => {
      signal = given;
      return new Promise((_, reject) => given.addEventListener('abort', () => reject(given.reason)));
    });
    block(120);
    connection.heard();
    expect(drops).toEqual([formatLeaseExpired(50)]);
    expect(signal?.aborted).toBe(true);
    expect(lines).toContain(`connection 1 execute 1 cancelled: ${formatLeaseExpired(50)}`);
    await call.catch(() => {});
    // The message that arrived with the drop (and any after it) runs nothing.
    let ran = false;
    const late = connection.run('execute', {}, async () => {
      ran = true;
      return { logs: [] };
    });
    await expect(late).rejects.toMatchObject({ code: 'EXECUTION_CANCELLED', message: formatLeaseExpired(50) });
    expect(ran).toBe(false);
    expect(drops).toHaveLength(1);
  });

  it('counts no silence while no call runs: the lease starts with the first call', async () => {
    const drops: string[] = [];
    const connection = new Connection(1, idleServerContext([]), (reason) => drops.push(reason));
    // Idle well past the lease, then a call: the lease starts with it.
    block(400);
    let release!: () => void;
    const call = connection.run(
      'execute',
      { heartbeatLease: 200 },
      () => new Promise((resolve) => (release = () => resolve({ logs: [] }))),
    );
    connection.heard();
    release();
    await call;
    expect(drops).toEqual([]);
  });
});
