/**
 * An execution's clock starts with its program, on the real workerd. A member that is not
 * scheduled between the hand-off and the program's start (held here by SIGSTOP, as a loaded host
 * holds a low-priority process off its cores) does not spend the program's `timeout`; a start that
 * never comes ends at `pool.programStartTimeoutMs`, with its text, and its member is ended.
 */
import { describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../../../src/protocol/dispatch.js';
import type { ExecuteRequest } from '../../../../src/protocol/types.js';
import { withSlack } from '../../../support/machine-slack.js';
import { isAlive, waitFor } from '../../../support/processes.js';

/** One tool call of 150 ms, longer than the 100 ms bound: the sandbox's own race is lost whenever it is asked. */
function waitingRequest(): ExecuteRequest {
  const dispatch = createEnvelopeDispatch(
    { api: () => new Promise((resolve) => setTimeout(() => resolve(7), 150)) },
    { active: true },
  );
  return {
    code: 'async () => await api.wait()',
    timeout: 100,
    providers: [{ name: 'api', tools: ['wait'] }],
    dispatch,
  };
}

/** The one idle member's workerd, once the executor has served a run. */
async function warmMember(executor: IsolateExecutor): Promise<number> {
  await executor.execute({ code: 'async () => 1' });
  const [member] = executor.stats().members;
  return member!.pid;
}

describe("an execution's clock", () => {
  it('does not count the time its member was held off the cores before the program started', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      const pid = await warmMember(executor);
      const outcome = executor.execute(waitingRequest());
      // Before the run's message is even written: the member reads it only once resumed.
      process.kill(pid, 'SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(pid, 'SIGCONT');
      // Counted from hand-off, the bound was spent while the member was stopped, and the
      // sandbox's race (the tool call is longer than the bound) could not prove a win.
      expect(await outcome).toEqual({ result: 7, logs: [] });
    } finally {
      await executor.dispose();
    }
  });

  it('ends a run whose program does not start within programStartTimeoutMs with its text, and ends its member', async () => {
    // The next execution's program starts on a fresh member, which a loaded machine may keep
    // from its cores for a few hundred ms: the bound is stretched by its slowdown.
    const programStartTimeoutMs = withSlack(500);
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, programStartTimeoutMs } });
    try {
      const pid = await warmMember(executor);
      const outcome = executor.execute({ code: 'async () => 1', timeout: 60_000 });
      process.kill(pid, 'SIGSTOP');
      expect(await outcome).toEqual({
        result: undefined,
        error: isolateText.programStartTimedOut(programStartTimeoutMs),
        ending: { code: 'PROGRAM_START_TIMEOUT', programStartTimeoutMs },
        logs: [],
      });
      await waitFor(() => !isAlive(pid), 'the stopped member to be ended');
      // The pool counts an end when it sees its process's wrapper exit, a moment after workerd.
      await waitFor(() => executor.stats().ends.killed + executor.stats().ends.died > 0, 'the pool to see the end');
      expect(executor.stats().ends).toMatchObject({ killed: 1, died: 0 });
      // The next execution gets a new member.
      await expect(executor.execute({ code: 'async () => 2' })).resolves.toMatchObject({ result: 2 });
    } finally {
      await executor.dispose();
    }
  });

  it('lets a first turn that spins before it could report its start run to its own bound, not the start bound', async () => {
    // The spin holds the process's only thread, so its `started` is never sent; it computes,
    // so it is not held off the cores, and its clock (its CPU time, until the start) ends it.
    // The start bound's period is a second: at load 24 on two cores a process gets about 80 ms of
    // CPU in it, well over the 20 ms that grant another period (in 300 ms it got about 25, and
    // the test failed at that load). The timeout, 1.5 s of its CPU, outlasts at least one period.
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, programStartTimeoutMs: 1000 } });
    try {
      const outcome = await executor.execute({ code: 'async () => { for (;;) {} }', timeout: 1500 });
      expect(outcome.ending).toEqual({ code: 'EXECUTION_TIMEOUT', timeout: 1500 });
    } finally {
      await executor.dispose();
    }
  });
});
