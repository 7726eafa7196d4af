/**
 * The tenant level on the real workerd (`pool.runsPerMember`, pool/member-sharing.ts): one
 * member runs several executions of one tenant at once, each in its own isolate; different
 * tenants never share a member; and within a tenant a bound still ends the run that passed it,
 * with its text.
 */
import { describe, expect, it } from 'vitest';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { ExecutionTimeoutError } from '../../../../src/protocol/errors.js';
import type { ExecuteResult } from '../../../../src/protocol/types.js';
import { waitFor } from '../../../support/processes.js';
import { toolGate } from '../../../support/tool-gate.js';

const through: ExecuteResult = { result: 'through', logs: [] };

function busyPids(executor: IsolateExecutor): Set<number> {
  return new Set(
    executor
      .stats()
      .members.filter((member) => member.busy)
      .map((member) => member.pid),
  );
}

describe('the tenant level', () => {
  it("runs one tenant's executions in one member, each in its own isolate, and two tenants in two", async () => {
    const executor = new IsolateExecutor({ pool: { runsPerMember: 4, maxWorkers: 4, spare: 0 } });
    try {
      const held = toolGate();
      // Each isolate has its own globals: a value one program leaves on globalThis is not another's.
      const code =
        'async () => { const mine = globalThis.mark === undefined; globalThis.mark = 1; return (await gate.pass()) + (mine ? "" : " shared"); }';
      const request = { ...held.request, code };
      const runsA = Array.from({ length: 4 }, () => executor.execute({ ...request, tenant: 'A' }));
      await waitFor(() => held.waiting() === 4, "tenant A's four programs to reach their tool");
      expect(busyPids(executor).size).toBe(1);
      const runsB = Array.from({ length: 2 }, () => executor.execute({ ...request, tenant: 'B' }));
      await waitFor(() => held.waiting() === 6, "tenant B's two programs to reach their tool");
      expect(busyPids(executor).size).toBe(2);
      held.open();
      expect(await Promise.all([...runsA, ...runsB])).toEqual(Array.from({ length: 6 }, () => through));
    } finally {
      await executor.dispose();
    }
  });

  it('shares no member between executions that name no tenant', async () => {
    const executor = new IsolateExecutor({ pool: { runsPerMember: 4, maxWorkers: 4, spare: 0 } });
    try {
      const held = toolGate();
      const runs = Array.from({ length: 3 }, () => executor.execute(held.request));
      await waitFor(() => held.waiting() === 3, 'three programs to reach their tool');
      expect(busyPids(executor).size).toBe(3);
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 3 }, () => through));
    } finally {
      await executor.dispose();
    }
  });

  it('ends the run that passes its bound with its text, beside another run of its tenant in the member', async () => {
    // A short turn grace: the spin is given up on soon after its bound.
    const executor = new IsolateExecutor({ turnGraceMs: 200, pool: { runsPerMember: 2, maxWorkers: 2, spare: 0 } });
    try {
      const held = toolGate();
      const waiting = executor.execute({ ...held.request, tenant: 'A' });
      await waitFor(() => held.waiting() === 1, 'the first program to reach its tool');
      const spin = executor.execute({ code: 'async () => { for (;;) {} }', timeout: 300, tenant: 'A' });
      await waitFor(() => busyPids(executor).size === 1 && executor.stats().states.busy === 1, 'the spin to join');
      expect(await spin).toEqual({
        result: undefined,
        error: ExecutionTimeoutError.format(300),
        ending: { code: 'EXECUTION_TIMEOUT', timeout: 300 },
        logs: [],
      });
      held.open();
      // What the level gives up: the spin's member ended under the other run, which says so at once.
      const other = await waiting;
      expect(other.error).toMatch(/^The sandbox process ended during the execution/);
      expect(other.ending?.code).toBe('PROCESS_ENDED');
    } finally {
      await executor.dispose();
    }
  });

  it('refuses a tenant that is not a non-empty string, naming the field', async () => {
    const executor = new IsolateExecutor({ pool: { runsPerMember: 2 } });
    try {
      await expect(executor.execute({ code: 'async () => 1', tenant: '' })).rejects.toThrow(
        'request.tenant must be a non-empty string or undefined, got "".',
      );
    } finally {
      await executor.dispose();
    }
  });
});
