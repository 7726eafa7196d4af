/**
 * `pool.cgroup`, against a directory laid out as a delegated cgroup v2 one. This machine has no
 * cgroup v2 of ours, so the kernel's part (enforcing `memory.max`, counting `oom_kill`) is played
 * by the test: it checks what the executor writes, where, and what it makes of an OOM kill.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../../../src/protocol/dispatch.js';
import { isAlive, waitFor } from '../../../support/processes.js';

const made: string[] = [];

function fakeCgroup(controllers: string | null): string {
  const root = mkdtempSync(join(tmpdir(), 'codemode-cgroup-'));
  made.push(root);
  if (controllers !== null) {
    writeFileSync(join(root, 'cgroup.controllers'), controllers);
    writeFileSync(join(root, 'cgroup.subtree_control'), '');
  }
  return root;
}

afterEach(() => {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('a delegated cgroup', () => {
  it("runs each member in a child capped at memoryLimitMb, and reports the kernel's OOM kill as the cap", async () => {
    const root = fakeCgroup('cpu memory pids');
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, memoryLimitMb: 300, cgroup: root } });
    try {
      expect(await executor.execute({ code: 'async () => "in its cgroup"' })).toEqual({
        result: 'in its cgroup',
        logs: [],
      });
      expect(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
      const [child] = readdirSync(root).filter((name) => name.startsWith('member-'));
      const member = join(root, child!);
      expect(readFileSync(join(member, 'memory.max'), 'utf8')).toBe(String(300 * 2 ** 20));
      // The wrapper moved itself in before starting workerd: its pid is the one written.
      expect(readFileSync(join(member, 'cgroup.procs'), 'utf8').trim()).toMatch(/^\d+$/);

      // The kernel's part: count an OOM kill, and end the process, while a run waits on a tool.
      let pid = 0;
      const dispatch = createEnvelopeDispatch(
        {
          host: () => {
            pid = executor.stats().members.find((candidate) => candidate.busy)!.pid;
            writeFileSync(join(member, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
            process.kill(pid, 'SIGKILL');
            return new Promise(() => {});
          },
        },
        { active: true },
      );
      const outcome = await executor.execute({
        code: 'async () => host.block()',
        providers: [{ name: 'host', tools: ['block'] }],
        dispatch,
      });
      expect(outcome).toEqual({
        result: undefined,
        error: isolateText.memoryLimit(300),
        ending: { code: 'MEMORY_LIMIT', memoryLimitMb: 300 },
        logs: [],
      });
      await waitFor(() => !isAlive(pid), 'the killed member to end');
      expect(await executor.execute({ code: 'async () => "next"' })).toMatchObject({ result: 'next' });
    } finally {
      await executor.dispose();
    }
  });

  it('refuses a directory that is not a cgroup v2 one, naming pool.cgroup', async () => {
    const root = fakeCgroup(null);
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, cgroup: root } });
    try {
      await expect(executor.execute({ code: 'async () => 1' })).rejects.toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        message: isolateText.cgroupUnusable(root, isolateText.cgroupNotV2),
      });
    } finally {
      await executor.dispose();
    }
  });

  it('refuses one whose memory controller is not available', async () => {
    const root = fakeCgroup('cpu pids');
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, cgroup: root } });
    try {
      await expect(executor.execute({ code: 'async () => 1' })).rejects.toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        message: isolateText.cgroupUnusable(root, isolateText.cgroupNoMemory),
      });
    } finally {
      await executor.dispose();
    }
  });
});
