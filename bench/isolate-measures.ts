/**
 * The measures only our IsolateExecutor takes (none of them can run on the reference: a spin
 * wedges wrangler dev, and it has no pool to kill a member of): cold start, a spin's reported
 * timeout, healing after a kill, and RSS per pool member.
 */
import { IsolateExecutor } from '../src/isolate/index.js';
import { createEnvelopeDispatch } from '../src/protocol/dispatch.js';
import { type Summary, summarize } from './stats.js';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until no replacement or spare is starting, so the next sample starts from a whole pool. */
export async function poolSettled(executor: Pick<IsolateExecutor, 'stats'>): Promise<void> {
  while (executor.stats().starting > 0) await sleep(2);
}

function expectResult(what: string, outcome: { result?: unknown; error?: string }, expected: unknown): void {
  if (outcome.result !== expected || outcome.error !== undefined) {
    throw new Error(`${what}: expected result ${JSON.stringify(expected)}, got ${JSON.stringify(outcome)}`);
  }
}

/** `new IsolateExecutor` (one member, no spare) to the first result, then disposed: every sample starts a workerd. */
export async function coldStart(samples: number): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      const outcome = await executor.execute({ code: 'async () => 42' });
      times.push(performance.now() - start);
      expectResult('cold start', outcome, 42);
    } finally {
      await executor.dispose();
    }
  }
  return summarize(times);
}

export interface SpinFigures {
  /** The call to its reported timeout. */
  reported: Summary;
  /** The next execution right after, served by the spare while the wedged process is replaced. */
  nextRun: Summary;
}

/** A spin at `bound` ms, alternately synchronous and after an await. */
export async function spinToTimeout(executor: IsolateExecutor, bound: number, samples: number): Promise<SpinFigures> {
  const reported: number[] = [];
  const nextRun: number[] = [];
  for (let i = 0; i < samples; i++) {
    await poolSettled(executor);
    const code = i % 2 === 0 ? 'async () => { while (true) {} }' : 'async () => { await null; while (true) {} }';
    const start = performance.now();
    const outcome = await executor.execute({ code, timeout: bound });
    reported.push(performance.now() - start);
    if (outcome.error === undefined)
      throw new Error(`the spin at a ${bound} ms bound did not time out: ${JSON.stringify(outcome)}`);
    const next = performance.now();
    expectResult('the run after a spin', await executor.execute({ code: 'async () => 1' }), 1);
    nextRun.push(performance.now() - next);
  }
  return { reported: summarize(reported), nextRun: summarize(nextRun) };
}

export interface HealFigures {
  /** The kill to the killed run's failure reported. */
  reported: Summary;
  /** The kill to the next execution's result: the pool serves again. */
  nextRun: Summary;
  /** The kill to no process starting any more: the pool has its warm spare back. */
  spareBack: Summary;
}

/**
 * SIGKILLs the workerd of a run in flight (from outside, as an OOM killer would), while the run
 * waits on a tool call that never answers, and times the recovery from the kill.
 */
export async function healAfterKill(executor: IsolateExecutor, samples: number): Promise<HealFigures> {
  const reported: number[] = [];
  const nextRun: number[] = [];
  const spareBack: number[] = [];
  for (let i = 0; i < samples; i++) {
    await poolSettled(executor);
    let killedAt = Number.NaN;
    const dispatch = createEnvelopeDispatch(
      {
        host: () => {
          const victim = executor.stats().members.find((member) => member.busy);
          if (victim === undefined) throw new Error('no busy pool member to kill');
          killedAt = performance.now();
          process.kill(victim.pid, 'SIGKILL');
          return new Promise(() => {});
        },
      },
      { active: true },
    );
    const failed = await executor.execute({
      code: 'async () => host.block()',
      providers: [{ name: 'host', tools: ['block'] }],
      dispatch,
    });
    reported.push(performance.now() - killedAt);
    if (failed.error === undefined) throw new Error(`the killed run did not fail: ${JSON.stringify(failed)}`);
    expectResult('the run after a kill', await executor.execute({ code: 'async () => 1' }), 1);
    nextRun.push(performance.now() - killedAt);
    await poolSettled(executor);
    spareBack.push(performance.now() - killedAt);
  }
  return { reported: summarize(reported), nextRun: summarize(nextRun), spareBack: summarize(spareBack) };
}

/** The resident set of every pool member, in MB (undefined where it cannot be read). */
export function memberRss(executor: IsolateExecutor): (number | undefined)[] {
  return executor.stats().members.map((member) => member.rssMb);
}
