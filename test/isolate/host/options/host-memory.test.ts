/**
 * The host's memory limit behind the default of pool.memoryBudgetMb: the cgroup v2 memory.max of
 * the host's own cgroup (or an ancestor's) when one is set, else the machine's memory. A fake
 * cgroup directory stands in where this machine sets none.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CgroupPaths,
  cgroupMemoryLimitMb,
  hostMemoryLimitMb,
} from '../../../../src/isolate/host/options/host-memory.js';
import { defaultMemoryBudgetMb } from '../../../../src/isolate/host/options/host-sizing.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';

const MIB = 2 ** 20;
const MACHINE_MB = 24 * 1024;

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fake /proc/self/cgroup naming `/agents/host`, and a fake hierarchy with the given memory.max files. */
function fakeCgroup(limits: Record<string, string>, membership = '0::/agents/host\n'): CgroupPaths {
  const root = mkdtempSync(join(tmpdir(), 'host-memory-'));
  made.push(root);
  const mount = join(root, 'cgroup');
  mkdirSync(join(mount, 'agents', 'host'), { recursive: true });
  for (const [dir, limit] of Object.entries(limits)) writeFileSync(join(mount, dir, 'memory.max'), `${limit}\n`);
  writeFileSync(join(root, 'membership'), membership);
  return { membership: join(root, 'membership'), mount };
}

describe("the host's memory limit", () => {
  it("reads the host's own cgroup's memory.max, and the budget is half of it", () => {
    const paths = fakeCgroup({ 'agents/host': String(2 * 1024 * MIB), agents: 'max' });
    expect(cgroupMemoryLimitMb(paths)).toBe(2048);
    expect(hostMemoryLimitMb(paths, MACHINE_MB)).toBe(2048);
    expect(defaultMemoryBudgetMb(paths, MACHINE_MB)).toBe(1024);
  });

  it('takes the smallest limit of its cgroup and the ancestors', () => {
    const paths = fakeCgroup({ 'agents/host': 'max', agents: String(512 * MIB), '.': String(4096 * MIB) });
    expect(hostMemoryLimitMb(paths, MACHINE_MB)).toBe(512);
  });

  it("takes the machine's memory where no cgroup sets a limit, or the limit is above it", () => {
    expect(hostMemoryLimitMb(fakeCgroup({ 'agents/host': 'max' }), MACHINE_MB)).toBe(MACHINE_MB);
    expect(hostMemoryLimitMb(fakeCgroup({ agents: String(64 * 1024 * MIB) }), MACHINE_MB)).toBe(MACHINE_MB);
    // Only cgroup v1 lines: no v2 membership to read.
    const v1Only = fakeCgroup({ 'agents/host': String(MIB) }, '4:memory:/agents/host\n');
    expect(hostMemoryLimitMb(v1Only, MACHINE_MB)).toBe(MACHINE_MB);
    expect(defaultMemoryBudgetMb(v1Only, MACHINE_MB)).toBe(MACHINE_MB / 2);
  });

  it("agrees on this machine with Node's own reading of the process's cgroup limit", () => {
    // libuv reads the same memory.max; 2^64 or 0 when none is set.
    const constrained = process.constrainedMemory?.() ?? 0;
    const machineMb = totalmem() / MIB;
    const expected = constrained > 0 && constrained / MIB < machineMb ? constrained / MIB : machineMb;
    expect(hostMemoryLimitMb()).toBeCloseTo(expected, 0);
  });

  it('is what an executor without pool.memoryBudgetMb budgets from, and stats() shows it', async () => {
    const executor = new IsolateExecutor();
    try {
      expect(executor.stats().memory.budgetMb).toBe(Math.floor(hostMemoryLimitMb() / 2));
    } finally {
      await executor.dispose();
    }
  });
});
