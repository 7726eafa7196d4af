/**
 * A member's /proc files read through descriptors held for its life (src/isolate/host/member/proc-files.ts):
 * the CPU time parsed from the bytes of /proc/<pid>/stat, and readings that end with the process.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ProcFiles, statCpuTicks } from '../../../../src/isolate/host/member/proc-files.js';

/** utime + stime of a stat text, split into fields as the kernel documents them (proc(5)). */
function cpuTicksBySplit(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('statCpuTicks', () => {
  it('adds utime and stime (fields 14 and 15), after a name that holds spaces and parentheses', () => {
    const stat = '4242 (a) b (c) S 1 2 3 4 5 6 7 8 9 10 250 37 0 0 20 0 1 0 99 1000 5\n';
    const bytes = Buffer.from(stat, 'latin1');
    expect(statCpuTicks(bytes, bytes.length)).toBe(287);
  });

  it('refuses a text cut before its 15th field, or whose times are not digits', () => {
    const cut = Buffer.from('4242 (w) S 1 2 3 4 5 6 7 8 9 10 250', 'latin1');
    expect(statCpuTicks(cut, cut.length - 1)).toBeUndefined();
    const nameless = Buffer.from('4242 w S 1 2 3 4 5 6 7 8 9 10 250 37 0', 'latin1');
    expect(statCpuTicks(nameless, nameless.length)).toBeUndefined();
    const signed = Buffer.from('4242 (w) S 1 2 3 4 5 6 7 8 9 10 -2 37 0', 'latin1');
    expect(statCpuTicks(signed, signed.length)).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('ProcFiles', () => {
  it('reads the CPU time this process has used, as /proc/self/stat split into fields tells it', () => {
    const files = new ProcFiles(process.pid);
    try {
      const before = cpuTicksBySplit(readFileSync('/proc/self/stat', 'latin1')) * 10;
      const read = files.cpuMs();
      const after = cpuTicksBySplit(readFileSync('/proc/self/stat', 'latin1')) * 10;
      expect(read).toBeGreaterThanOrEqual(before);
      expect(read).toBeLessThanOrEqual(after);
    } finally {
      files.close();
    }
  });

  it("reads a sleeping process's resident set as its status tells it, and nothing once it has ended", async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    const files = new ProcFiles(child.pid!);
    const statusRssKb = () =>
      Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'latin1'))![1]);
    const sleeping = () => /^State:\s+S/m.test(readFileSync(`/proc/${child.pid}/status`, 'latin1'));
    try {
      // 'spawn' fires while sleep may still be loading (its resident set growing): wait, bounded,
      // until it sleeps, then read between two readings of its status that agree.
      const deadline = Date.now() + 5_000;
      while (!sleeping() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      const rssKb = statusRssKb();
      const read = files.rssMb();
      expect(statusRssKb()).toBe(rssKb);
      expect(read).toBe(rssKb / 1024);
      expect(files.cpuMs()).toBe(cpuTicksBySplit(readFileSync(`/proc/${child.pid}/stat`, 'latin1')) * 10);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      expect(files.cpuMs()).toBeUndefined();
      expect(files.rssMb()).toBeUndefined();
    } finally {
      files.close();
      child.kill('SIGKILL');
    }
  });
});
