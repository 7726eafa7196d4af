/** What the pool knows of one member, and what it needs of a member's process. */
import type { MemberMemory } from '../member/process-memory.js';
import type { ProcessFate } from '../run/run-ending.js';
import type { TenantFrame } from './tenancy.js';

/** The part of a member's process (MemberProcess) the pool uses: a fake one serves its unit tests. */
export interface PoolProcess {
  readonly pid: number;
  readonly alive: boolean;
  /** Settles once the process has exited; `intended` when the host ended it. */
  readonly ended: Promise<{ intended: boolean }>;
  kill(): void;
  /** Its resident set in MB, where the platform tells. */
  rssMb(): number | undefined;
}

/** Why the pool lost a member. */
export interface PoolEnds {
  /** Idle past `pool.idleTimeoutMs`, beyond `pool.minWorkers` and the spares. */
  reaped: number;
  /** Worn: `pool.recycleAfterRuns` runs, or `pool.maxRssMb` of resident memory; or idle and ended over `pool.memoryBudgetMb`. */
  recycled: number;
  /** Ended because of its run: a spin or a timeout, the CPU bound, a memory or heap cap, the memory budget, a cancel. */
  killed: number;
  /** Ended on its own: a crash, or a signal from outside. */
  died: number;
}

export type EndCause = keyof PoolEnds | 'disposed';

/** What the pool knows of one member. Only the pool writes it. */
export interface Member<P extends PoolProcess> {
  readonly process: P;
  /** Runs completed in it (executions and invocations). */
  runs: number;
  /** Reserved for its runs, from the first one's `acquire` to the last one's `release`. */
  busy: boolean;
  /** Runs in it now: at most one, or `pool.runsPerMember` of one tenant's (member-sharing.ts). */
  running: number;
  /** The tenant whose runs share it now (member-sharing.ts), or undefined when it is not shared. */
  group: string | undefined;
  /** The gravest verdict of its runs over so far while others still run in it (member-sharing.ts). */
  heldFate: ProcessFate;
  /** Its run is a nested one admitted beyond `maxWorkers`. */
  overshoot: boolean;
  /** No new executions: it is being ended but still holds retained executions. */
  draining: boolean;
  /** Its process is gone; the state stays until the run that was in it is released. */
  ended: boolean;
  /** When it last became idle (the pool's clock). */
  idleSince: number;
  /** Why the pool ended it, or is ending it once its retained executions are closed. */
  endCause: EndCause | undefined;
  /** Its memory at its last reading (memory-budget.ts), undefined before the first. */
  memory: MemberMemory | undefined;
  /** The tenant whose run it serves, or whose retained execution it holds (tenancy.ts). */
  tenant: TenantFrame | undefined;
  /** When it was last given a run, in the pool's order of serving: the newest run is the highest. */
  servedAt: number;
  /** Ended so that another tenant's run could have memory (pool.ts, `#reclaim`); not yet exited. */
  reclaimed: boolean;
}

/** Whether it can take runs: neither draining nor being ended. */
export function isServing(member: Member<PoolProcess>): boolean {
  return !member.ended && !member.draining && member.process.alive;
}
