/**
 * The tenant level (`pool.runsPerMember`, member-sharing.ts) on the pool's policy alone: one member
 * runs up to that many executions of one tenant at once; executions of different tenants, with no
 * tenant, or retaining handles never share; a member is dealt with by its runs' gravest verdict
 * once the last is over; and the pool grows by members a tenant's waiters fill, not one each.
 */
import { describe, expect, it } from 'vitest';
import { canJoin, graverFate, membersForWaiters } from '../../../../src/isolate/host/pool/member-sharing.js';
import type { Member, PoolProcess } from '../../../../src/isolate/host/pool/pool-member.js';
import { type FakeProcess, poolWith, settle, track } from '../../../support/pool-fakes.js';

const A = { key: 'A' };
const B = { key: 'B' };
const LEVEL_4 = { runsPerMember: 4, spare: 0, maxWorkers: 8, maxStarting: 8, maxQueue: 100 };

/** Acquires `count` processes for that tenant, as shareable executions. */
function acquireFor(pool: ReturnType<typeof poolWith>['pool'], tenant: { key: string } | undefined, count: number) {
  return Array.from({ length: count }, () => track(pool.acquire(undefined, undefined, false, tenant, true)));
}

function pids(runs: { value?: FakeProcess }[]): Set<number> {
  return new Set(runs.map((run) => run.value!.pid));
}

describe('the tenant level', () => {
  it('runs up to runsPerMember executions of one tenant in one member, and grows by members they fill', async () => {
    const { pool, launcher } = poolWith(LEVEL_4);
    const runs = acquireFor(pool, A, 8);
    await settle();
    // Eight waiters of one tenant want two members of four, not eight.
    expect(launcher.starting()).toBe(2);
    await launcher.startAll();
    expect(runs.every((run) => run.value !== undefined)).toBe(true);
    expect(pids(runs).size).toBe(2);
    expect(launcher.starting()).toBe(0);
    await pool.dispose();
  });

  it("never puts two tenants' executions in one member", async () => {
    const { pool, launcher } = poolWith(LEVEL_4);
    const runsA = acquireFor(pool, A, 2);
    const runsB = acquireFor(pool, B, 2);
    await settle();
    expect(launcher.starting()).toBe(2);
    await launcher.startAll();
    expect(pids(runsA).size).toBe(1);
    expect(pids(runsB).size).toBe(1);
    expect([...pids(runsA)][0]).not.toBe([...pids(runsB)][0]);
    await pool.dispose();
  });

  it('shares nothing for a run with no tenant, one that retains, or at the default level', async () => {
    const untenanted = poolWith(LEVEL_4);
    const noTenant = acquireFor(untenanted.pool, undefined, 3);
    await settle();
    await untenanted.launcher.startAll();
    expect(pids(noTenant).size).toBe(3);
    await untenanted.pool.dispose();

    const retaining = poolWith(LEVEL_4);
    const retainers = Array.from({ length: 3 }, () =>
      track(retaining.pool.acquire(undefined, undefined, false, A, false)),
    );
    await settle();
    await retaining.launcher.startAll();
    expect(pids(retainers).size).toBe(3);
    await retaining.pool.dispose();

    const level1 = poolWith({ ...LEVEL_4, runsPerMember: 1 });
    const one = acquireFor(level1.pool, A, 3);
    await settle();
    await level1.launcher.startAll();
    expect(pids(one).size).toBe(3);
    await level1.pool.dispose();
  });

  it("joins a busy member of the tenant with room before taking an idle one, and frees the member's slot with its last run", async () => {
    const { pool, launcher } = poolWith({ ...LEVEL_4, maxWorkers: 1 });
    const first = acquireFor(pool, A, 1);
    await settle();
    await launcher.startAll();
    const member = first[0]!.value!;
    // The one slot is the member's: the tenant's next runs join it; another tenant's waits.
    const more = acquireFor(pool, A, 3);
    const other = acquireFor(pool, B, 1);
    await settle();
    expect(more.every((run) => run.value === member)).toBe(true);
    expect(other[0]!.settled).toBe(false);
    // Full: a fifth of the tenant's waits too.
    const fifth = acquireFor(pool, A, 1);
    await settle();
    expect(fifth[0]!.settled).toBe(false);
    pool.release(member, 'keep');
    await settle();
    expect(fifth[0]!.value).toBe(member);
    for (let i = 0; i < 4; i += 1) pool.release(member, 'keep');
    await settle();
    // Its last run over, the member serves the other tenant.
    expect(other[0]!.value).toBe(member);
    await pool.dispose();
  });

  it("ends a member by its runs' gravest verdict once the last is over, and lets none join it meanwhile", async () => {
    const { pool, launcher } = poolWith(LEVEL_4);
    const runs = acquireFor(pool, A, 2);
    await settle();
    await launcher.startAll();
    const member = runs[0]!.value!;
    expect(runs[1]!.value).toBe(member);
    // One run gave up on it (its process may still run the abandoned code): no one joins now.
    pool.release(member, 'retire');
    const late = acquireFor(pool, A, 1);
    await settle();
    await launcher.startAll();
    expect(late[0]!.value).not.toBe(member);
    expect(member.killed).toBe(false);
    pool.release(member, 'keep');
    await settle();
    expect(member.killed).toBe(true);
    expect(pool.stats().ends.killed).toBe(1);
    // The replacement the pool started for the burst's peak, so dispose does not wait on it.
    await launcher.startAll();
    await pool.dispose();
  });
});

it('ends a wedged member at once, under the runs still in it', async () => {
  const { pool, launcher } = poolWith(LEVEL_4);
  const runs = acquireFor(pool, A, 2);
  await settle();
  await launcher.startAll();
  const member = runs[0]!.value!;
  // One run's process did not answer its give-up: the other run learns of the end from its process.
  pool.release(member, 'kill');
  expect(member.killed).toBe(true);
  pool.release(member, 'dead');
  await settle();
  expect(pool.stats().ends.killed).toBe(1);
  await launcher.startAll();
  await pool.dispose();
});

describe('the sharing rules', () => {
  const member = (over: Partial<Member<PoolProcess>>): Member<PoolProcess> => ({
    process: { pid: 1, alive: true, ended: new Promise(() => {}), kill: () => {}, rssMb: () => 1 },
    runs: 0,
    busy: true,
    running: 1,
    group: 'A',
    heldFate: 'keep',
    overshoot: false,
    draining: false,
    ended: false,
    idleSince: 0,
    endCause: undefined,
    memory: undefined,
    tenant: undefined,
    servedAt: 0,
    reclaimed: false,
    ...over,
  });
  const settings = { runsPerMember: 2, recycleAfterRuns: 10 };

  it('joins only a serving member of the same tenant, with room, not condemned nor worn', () => {
    expect(canJoin(member({}), { group: 'A' }, settings)).toBe(true);
    expect(canJoin(member({}), { group: 'B' }, settings)).toBe(false);
    expect(canJoin(member({}), {}, settings)).toBe(false);
    expect(canJoin(member({ running: 2 }), { group: 'A' }, settings)).toBe(false);
    expect(canJoin(member({ heldFate: 'retire' }), { group: 'A' }, settings)).toBe(false);
    expect(canJoin(member({ draining: true }), { group: 'A' }, settings)).toBe(false);
    expect(canJoin(member({ reclaimed: true }), { group: 'A' }, settings)).toBe(false);
    expect(canJoin(member({ runs: 9 }), { group: 'A' }, settings)).toBe(false);
  });

  it('keeps the gravest verdict', () => {
    expect(graverFate('keep', 'retire')).toBe('retire');
    expect(graverFate('killed', 'keep')).toBe('killed');
    expect(graverFate('retire', 'dead')).toBe('dead');
  });

  it("counts a tenant's waiters by the members they fill", () => {
    const waiters = [{ group: 'A' }, { group: 'A' }, { group: 'A' }, { group: 'B' }, {}, { group: 'A', target: 1 }];
    expect(membersForWaiters(waiters, 2)).toBe(2 + 1 + 1);
    expect(membersForWaiters(waiters, 1)).toBe(5);
  });
});
