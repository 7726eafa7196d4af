/**
 * The memory guard's messaging (src/isolate/host/member/memory-guard.ts), on a plain child process instead of
 * a pool member: a process is handed to the guard's thread once, and each run arms and disarms
 * its cap through shared memory. The caps end the child as they would a member; the end-to-end
 * caps on workerd are test/hostile/containment.test.ts's row 4. Linux only (the guard reads /proc).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { guardProcessMemory, type ProcessMemoryGuard } from '../../../../src/isolate/host/member/memory-guard.js';
import { isAlive, waitFor } from '../../../support/processes.js';

const children: ChildProcess[] = [];
const guards: ProcessMemoryGuard[] = [];

afterEach(() => {
  for (const guard of guards.splice(0)) guard.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A child that sleeps, its resident set tens of MB (a Node process), and its guard. */
async function guardedChild(): Promise<{ child: ChildProcess; pid: number; guard: ProcessMemoryGuard }> {
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("up"); setInterval(() => {}, 1000)'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('error', reject);
  });
  const guard = guardProcessMemory(child.pid!);
  guards.push(guard);
  return { child, pid: child.pid!, guard };
}

describe.runIf(process.platform === 'linux')('the memory guard', () => {
  it('reads no process that no run armed, and wakes to end one armed over its cap', async () => {
    const { pid, guard } = await guardedChild();
    // Many of the thread's 2 ms intervals: an unarmed cap of nothing would have been read by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isAlive(pid)).toBe(true);
    const exceeded: number[] = [];
    guard.arm(1, (rssMb) => exceeded.push(rssMb));
    await waitFor(() => exceeded.length > 0 && !isAlive(pid), 'the armed cap to end the child');
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0]).toBeGreaterThan(1);
  });

  it("leaves a later run's cap armed when an earlier run of the process lets its own go", async () => {
    const { pid, guard } = await guardedChild();
    const told: string[] = [];
    const releaseEarlier = guard.arm(1_000_000, () => told.push('earlier'));
    guard.arm(1, () => told.push('later'));
    releaseEarlier();
    await waitFor(() => told.length > 0 && !isAlive(pid), "the later run's cap to end the child");
    expect(told).toEqual(['later']);
  });

  it('tells no run whose cap was let go, and keeps guarding runs armed after it', async () => {
    const { pid, guard } = await guardedChild();
    const told: string[] = [];
    guard.arm(1_000_000, () => told.push('first'))();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive(pid)).toBe(true);
    guard.arm(1, () => told.push('second'));
    await waitFor(() => told.length > 0 && !isAlive(pid), "the second run's cap to end the child");
    expect(told).toEqual(['second']);
  });
});
