/** The pool's snapshot for monitoring and the benchmark: its members, its queue, its history. */
import { pssMb } from '../member/process-memory.js';
import type { PoolMemoryStats } from './memory-budget.js';
import type { Member, PoolEnds, PoolProcess } from './pool-member.js';

export type { PoolMemoryStats } from './memory-budget.js';

/** What a live member is doing. A draining member that serves an invocation is busy. */
export type MemberState = 'idle' | 'busy' | 'draining';

export interface PoolMemberStats {
  pid: number;
  state: MemberState;
  runs: number;
  rssMb: number | undefined;
  /** Proportional set size in MB, when `stats({pss: true})` asked for it and the platform reports it (Linux). */
  pssMb: number | undefined;
  busy: boolean;
  draining: boolean;
  retained: number;
}

export interface PoolStats {
  members: PoolMemberStats[];
  /** Live members by state, and the processes still starting. */
  states: Record<MemberState | 'starting', number>;
  /** Processes still starting (as `states.starting`). */
  starting: number;
  /** Executions and invocations waiting for a process. */
  queued: number;
  /** The bound in force, an upper one: its default depends on the host. */
  maxWorkers: number;
  /** The members' memory against `pool.memoryBudgetMb`, at its last reading. */
  memory: PoolMemoryStats;
  /** Processes started since construction. */
  spawns: number;
  /** Processes ended since construction, by why (not counting `dispose`). */
  ends: PoolEnds;
}

export interface PoolStatsOptions {
  /** Read each member's PSS (about a millisecond per member on Linux). Default false. */
  pss?: boolean | undefined;
}

/** What the snapshot is read from: the members, and the figures it passes on as they are. */
export interface PoolSnapshotSource<P extends PoolProcess>
  extends Pick<PoolStats, 'starting' | 'queued' | 'maxWorkers' | 'memory' | 'spawns' | 'ends'> {
  live: Member<P>[];
  retainedOn: (process: P) => number;
}

export function poolStats<P extends PoolProcess>(source: PoolSnapshotSource<P>, options: PoolStatsOptions): PoolStats {
  const states = { starting: source.starting, idle: 0, busy: 0, draining: 0 };
  const members = source.live.map((member): PoolMemberStats => {
    const state: MemberState = member.busy ? 'busy' : member.draining ? 'draining' : 'idle';
    states[state] += 1;
    const { process } = member;
    return {
      pid: process.pid,
      state,
      runs: member.runs,
      rssMb: process.rssMb(),
      pssMb: options.pss === true ? pssMb(process.pid) : undefined,
      busy: member.busy,
      draining: member.draining,
      retained: source.retainedOn(process),
    };
  });
  return {
    members,
    states,
    starting: source.starting,
    queued: source.queued,
    maxWorkers: source.maxWorkers,
    memory: source.memory,
    spawns: source.spawns,
    ends: { ...source.ends },
  };
}
