/**
 * Pool members run below the host's priority (member-priority.ts): every thread of a member ten
 * nice values below the host, and, where the kernel schedules by session (autogroup), its
 * session's group too. Linux only: that is where the host reads and sets them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { belowHost } from '../../../../src/isolate/host/member/member-priority.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { waitFor } from '../../../support/processes.js';

/** The nice value of one thread: field 19 of /proc/<pid>/task/<tid>/stat. */
function niceOf(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

function autogroupEnabled(): boolean {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
  } catch {
    return false;
  }
}

describe.runIf(process.platform === 'linux')('a member’s priority', () => {
  it('is below the host’s: every thread, and its autogroup where there is one', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 1 } });
    try {
      await executor.execute({ code: 'async () => 1' });
      await waitFor(() => executor.stats().members.length === 2 && executor.stats().starting === 0, 'two members');
      const memberNice = belowHost(niceOf(process.pid, process.pid));
      for (const { pid } of executor.stats().members) {
        const threads = readdirSync(`/proc/${pid}/task`).map(Number);
        expect(threads.length).toBeGreaterThan(1);
        for (const tid of threads) expect(niceOf(pid, tid)).toBe(memberNice);
        if (autogroupEnabled()) {
          const hostGroup = readFileSync('/proc/self/autogroup', 'utf8');
          const groupNice = belowHost(Number(/nice (-?\d+)/.exec(hostGroup)?.[1] ?? 0));
          await waitFor(
            () => readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().endsWith(`nice ${groupNice}`),
            `the autogroup of member ${pid} to be lowered`,
          );
        }
      }
    } finally {
      await executor.dispose();
    }
  });
});
