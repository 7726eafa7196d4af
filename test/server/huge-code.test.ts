/**
 * Huge programs sent to a real daemon through connect() (issue 22, item 5): each is refused by
 * the daemon's executor with the text naming limits.maxCodeBytes (its --max-code-bytes), before
 * anything parses the code; one past the daemon's --max-message-bytes never reaches the executor;
 * and another client's trivial run is served meanwhile.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/isolate/host/options.js';
import { isolateText } from '../../src/isolate/host/texts.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { startDaemon, stopAllDaemons } from '../support/daemon.js';

afterAll(stopAllDaemons);

const MIB = 2 ** 20;

describe('huge programs through connect()', () => {
  it('are refused by the code cap while another client is served, and the session goes on', async () => {
    const daemon = await startDaemon();
    const attacker = await connect(daemon.url, { websocket: NodeWebSocket });
    const neighbour = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      expect(await neighbour.execute({ code: 'async () => 1 + 1' })).toMatchObject({ result: 2 });
      // Under the daemon's 16 MiB message cap, over the executor's code cap.
      const programs = [1, 2, 3].map((n) => `async () => "${String(n).repeat(15 * MIB)}"`);
      const started = performance.now();
      const beside = neighbour.execute({ code: 'async () => 1 + 1' }).then((outcome) => ({
        outcome,
        ms: performance.now() - started,
      }));
      const refused = await Promise.all(programs.map((code) => attacker.execute({ code })));
      for (const [i, outcome] of refused.entries()) {
        expect(outcome).toEqual({
          result: undefined,
          error: isolateText.codeTooLarge(Buffer.byteLength(programs[i]!), DEFAULT_LIMITS.maxCodeBytes),
          logs: [],
        });
      }
      const { outcome, ms } = await beside;
      expect(outcome).toMatchObject({ result: 2 });
      // Measured, not asserted: it includes the client's own sending of the 45 MiB.
      console.log(`a neighbour's trivial run through the daemon beside three 15 MiB programs: ${ms.toFixed(0)} ms`);
      // Past the message cap: refused whole, the executor never sees it.
      await expect(attacker.execute({ code: `async () => "${'z'.repeat(17 * MIB)}"` })).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
      });
      expect(await attacker.execute({ code: 'async () => "next"' })).toMatchObject({ result: 'next' });
    } finally {
      await attacker.dispose();
      await neighbour.dispose();
    }
  });
});
