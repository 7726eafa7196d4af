/**
 * RetainedExecutions, the one owner of retained executions on the host, without workerd: the
 * place an execution that asks to retain holds from admission until its run settles, what each
 * process holds (which the pool asks before it drains or reaps one), and losing one with its
 * process. The real-workerd behaviour is in test/hostile/retained.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  RetainedExecutions,
  type RetainingProcess,
} from '../../../../src/isolate/host/executor/retained-executions.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { ExecutorError } from '../../../../src/protocol/errors.js';

class FakeProcess implements RetainingProcess {
  alive = true;
  readonly ended: Promise<void>;
  exit!: () => void;

  constructor() {
    this.ended = new Promise<void>((resolve) => {
      this.exit = () => {
        this.alive = false;
        resolve();
      };
    });
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function ownerWith(maxRetained: number, retainedIdleTimeoutMs = 60_000) {
  const released: [FakeProcess, string][] = [];
  const owner = new RetainedExecutions<FakeProcess>({ maxRetained, retainedIdleTimeoutMs }, (member, executionId) =>
    released.push([member, executionId]),
  );
  return { owner, released };
}

function refusal(run: () => unknown): ExecutorError {
  try {
    run();
  } catch (error) {
    return error as ExecutorError;
  }
  throw new Error('not refused');
}

describe('retained executions, one owner', () => {
  it('counts a place from admission, and frees it once whether the run retained or not', () => {
    const { owner } = ownerWith(2);
    const first = owner.reserve();
    const second = owner.reserve();
    const full = refusal(() => owner.reserve());
    expect(full.code).toBe('LIMIT_EXCEEDED');
    expect(full.message).toBe(isolateText.retainedLimit(2));
    // A run that did not retain frees its place; freeing again frees nothing more.
    first.free();
    first.free();
    const third = owner.reserve();
    expect(() => owner.reserve()).toThrow(ExecutorError);
    // A filled place stays taken by the retained execution, and a later free is a no-op.
    const member = new FakeProcess();
    second.fill('exec-2', member, null);
    second.free();
    expect(owner.size).toBe(1);
    expect(() => owner.reserve()).toThrow(ExecutorError);
    third.free();
    owner.reserve();
    owner.clear();
  });

  it('tells what each process holds, and releases the process when its execution is closed', () => {
    const { owner, released } = ownerWith(4);
    const member = new FakeProcess();
    const other = new FakeProcess();
    owner.reserve().fill('exec-1', member, null);
    expect(owner.heldBy(member)).toBe(1);
    expect(owner.heldBy(other)).toBe(0);
    owner.close('exec-1', isolateText.executionClosed('exec-1'));
    expect(owner.heldBy(member)).toBe(0);
    expect(released).toEqual([[member, 'exec-1']]);
    const gone = refusal(() => owner.find('exec-1'));
    expect(gone.code).toBe('HANDLE_NOT_FOUND');
    expect(gone.message).toBe(isolateText.executionClosed('exec-1'));
  });

  it('drops an execution lost with its process, and tells its observers', async () => {
    const { owner } = ownerWith(4);
    const member = new FakeProcess();
    const closed: string[] = [];
    owner.observeClosed((executionId) => closed.push(executionId));
    owner.reserve().fill('exec-1', member, null);
    member.exit();
    await settle();
    expect(owner.heldBy(member)).toBe(0);
    expect(owner.size).toBe(0);
    expect(closed).toEqual(['exec-1']);
    expect(refusal(() => owner.find('exec-1')).message).toBe(isolateText.executionLost('exec-1'));
  });

  it("closes one at the shorter of the pool's idle bound and its call's, and tells its observers whose bound it was", async () => {
    const { owner } = ownerWith(4, 40);
    const closed: [string, string][] = [];
    owner.observeClosed((executionId, cause) => closed.push([executionId, cause]));
    const daemonIdle = { timeoutMs: 20, option: '--retained-idle-timeout-ms' };
    owner.reserve(daemonIdle).fill('by-call', new FakeProcess(), null);
    // A bound longer than the pool's gives way to the pool's.
    owner.reserve({ timeoutMs: 60_000, option: '--retained-idle-timeout-ms' }).fill('by-pool', new FakeProcess(), null);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(closed).toEqual([
      ['by-call', 'callerIdle'],
      ['by-pool', 'idle'],
    ]);
    expect(refusal(() => owner.find('by-call')).message).toBe(
      isolateText.executionExpired('by-call', 20, '--retained-idle-timeout-ms'),
    );
    expect(refusal(() => owner.find('by-pool')).message).toBe(isolateText.executionExpired('by-pool', 40));
  });
});
