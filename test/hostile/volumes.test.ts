/**
 * Sizes and volumes a hostile program controls, on the real workerd (issue 22, items 5 to 8 and
 * 11): a huge program, a flood of console output (dropped in the sandbox), a result that expands,
 * tool calls left waiting on the host, a module named outside the module root, an outcome too
 * large for workerd's RPC. Each is refused with a text that names its cap, or dropped, and the
 * next run succeeds. Every loop a program
 * runs is bounded in count, and every run by its timeout.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LIMITS, MAX_OUTCOME_RPC_BYTES, maxSupervisorFrameBytes } from '../../src/isolate/host/options.js';
import { isolateText } from '../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { ExecutorError } from '../../src/protocol/errors.js';
import { withSlack } from '../support/machine-slack.js';
import { isAlive } from '../support/processes.js';

/** How often acorn's tokenizer was started: the leading-import scan is its only user on this path. */
const tokenizerStarts = vi.hoisted(() => ({ count: 0 }));
vi.mock('acorn', async (importOriginal) => {
  const acorn = await importOriginal<typeof import('acorn')>();
  return {
    ...acorn,
    tokenizer: (...args: Parameters<typeof acorn.tokenizer>) => {
      tokenizerStarts.count += 1;
      return acorn.tokenizer(...args);
    },
  };
});

const MIB = 2 ** 20;
let executor: IsolateExecutor;

beforeAll(() => {
  executor = new IsolateExecutor({
    // A guard, not a figure under test: a loaded host moves these megabytes slower.
    timeout: withSlack(10_000),
    pool: { maxWorkers: 2, spare: 1 },
    limits: { maxConcurrentToolCalls: 8 },
  });
});

afterAll(async () => {
  await executor.dispose();
});

async function assertNextRunSucceeds(): Promise<void> {
  expect(await executor.execute({ code: 'async () => "next"' })).toEqual({ result: 'next', logs: [] });
}

describe('a huge program (limits.maxCodeBytes)', () => {
  it('runs a 1.1 MB program (an inline data literal) at the default cap, as upstream does', async () => {
    const code = `async () => { const data = "${'a'.repeat(1_100_000)}"; return data.length }`;
    expect(await executor.execute({ code })).toEqual({ result: 1_100_000, logs: [] });
  });

  it('is refused with a text naming the cap, before its imports are looked for', async () => {
    const code = `import x from "x.js";\nasync () => "${'z'.repeat(DEFAULT_LIMITS.maxCodeBytes)}"`;
    const starts = tokenizerStarts.count;
    const outcome = await executor.execute({ code, modules: { 'x.js': 'export default 1' } });
    expect(outcome).toEqual({
      result: undefined,
      error: isolateText.codeTooLarge(Buffer.byteLength(code), DEFAULT_LIMITS.maxCodeBytes),
      logs: [],
    });
    expect(tokenizerStarts.count).toBe(starts);
    await assertNextRunSucceeds();
  });

  it("leaves a neighbour's trivial run unhindered while three 15 MiB programs are refused", async () => {
    const timed = async () => {
      const started = performance.now();
      const outcome = await executor.execute({ code: 'async () => 1 + 1' });
      return { outcome, ms: performance.now() - started };
    };
    const alone = await timed();
    // Made before the clock starts: building them is the test's cost, not the executor's.
    const programs = [1, 2, 3].map((n) => `async () => "${String(n).repeat(15 * MIB)}"`);
    const neighbour = timed();
    const refused = await Promise.all(programs.map((code) => executor.execute({ code })));
    for (const outcome of refused) expect(outcome.error).toMatch(/\(limits\.maxCodeBytes\)/);
    const beside = await neighbour;
    expect(beside.outcome).toEqual({ result: 2, logs: [] });
    // Measured, not asserted: the neighbour's latency alone and beside the three.
    console.log(
      `a trivial run: ${alone.ms.toFixed(1)} ms alone, ${beside.ms.toFixed(1)} ms beside three 15 MiB programs`,
    );
  });
});

describe('a flood of console output upstream leaves out of its logs (limits.maxProcessOutputBytes)', () => {
  it('is dropped in the sandbox: the run returns its value, and its process lives on', async () => {
    const before = executor.stats().members.map((member) => member.pid);
    const hostCpu = process.cpuUsage();
    // Bounded: 2 GB in a loop of 2 million, and the run's timeout. Before the sandbox dropped it,
    // it reached the process's output, whose cap ended the run.
    const outcome = await executor.execute({
      code: 'async () => { const line = "i".repeat(1000); for (let i = 0; i < 2e6; i++) { console.info(line); console.debug(line) } return "done" }',
    });
    const spent = process.cpuUsage(hostCpu);
    expect(outcome).toEqual({ result: 'done', logs: [] });
    for (const pid of before) expect(isAlive(pid)).toBe(true);
    console.log(`host CPU during a console.info flood: ${((spent.user + spent.system) / 1000).toFixed(0)} ms`);
    await assertNextRunSucceeds();
  });
});

describe('a result that expands (limits.maxResultBytes)', () => {
  it('fails a shared-reference tree by its expanded size, with the cap text', async () => {
    const outcome = await executor.execute({
      code: 'async () => { let x = [1]; for (let i = 0; i < 28; i++) x = [x, x]; return x }',
    });
    // Written out, 2^29 - 1 arrays of 9 bytes each: a leaf ["a",1,1], a node ["a",2,…,…] beside
    // its halves (test/isolate/contract/expanded-size.test.ts).
    const size = 9 * (2 ** 29 - 1);
    // No matcher ever prints the outcome: a failure would write the tree out.
    expect(outcome.error).toBe(isolateText.resultTooLarge(size, DEFAULT_LIMITS.maxResultBytes));
    expect(outcome.result === undefined && outcome.logs.length === 0).toBe(true);
    await assertNextRunSucceeds();
  });

  it('still returns shared and cyclic references that stay small', async () => {
    const outcome = await executor.execute({
      code: 'async () => { const shared = { n: 1 }; const cycle = [shared, shared]; cycle.push(cycle); return cycle }',
    });
    const value = outcome.result as unknown[];
    expect(value[0]).toBe(value[1]);
    expect(value[2]).toBe(value);
  });
});

describe('tool calls waiting on the host', () => {
  const providers = [{ name: 'api', tools: ['send'] }];

  it('holds calls past limits.maxConcurrentToolArgsBytes in the sandbox; the host never holds more', async () => {
    let received = 0;
    let heldBytes = 0;
    let maxHeldBytes = 0;
    const dispatch = async (_provider: string, _tool: string, args: string) => {
      received += 1;
      heldBytes += args.length;
      maxHeldBytes = Math.max(maxHeldBytes, heldBytes);
      await new Promise((resolve) => setTimeout(resolve, 100));
      heldBytes -= args.length;
      return '{"result":"ok"}';
    };
    // 16 calls of 4 MiB each, all made before any is answered: the cap of 32 MiB holds seven. The
    // bound is generous: each call carries 4 MiB through the channel, slow on a loaded machine.
    const outcome = await executor.execute({
      code: `async () => {
        const big = "y".repeat(4 * 2 ** 20);
        const calls = [];
        for (let i = 0; i < 16; i++) calls.push(api.send(big).then((r) => r, (e) => e.message));
        return await Promise.all(calls);
      }`,
      providers,
      dispatch,
      timeout: 60_000,
    });
    expect(outcome).toEqual({ result: Array(16).fill('ok'), logs: [] });
    expect(received).toBe(16);
    expect(maxHeldBytes).toBeLessThanOrEqual(DEFAULT_LIMITS.maxConcurrentToolArgsBytes);
  });

  it('holds calls past limits.maxConcurrentToolCalls until earlier ones answer, and sends them in order', async () => {
    const order: unknown[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const dispatch = async (_provider: string, _tool: string, args: string) => {
      order.push(JSON.parse(args)[0]);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight -= 1;
      return args.replace(/^\[(.*)\]$/, '{"result":$1}');
    };
    const outcome = await executor.execute({
      code: 'async () => Promise.all(Array.from({ length: 30 }, (_, i) => api.send(i)))',
      providers,
      dispatch,
    });
    const indices = Array.from({ length: 30 }, (_, i) => i);
    expect(outcome).toEqual({ result: indices, logs: [] });
    expect(order).toEqual(indices);
    expect(maxInFlight).toBe(8);
  });

  it('refuses a call whose arguments alone are over limits.maxConcurrentToolArgsBytes', async () => {
    const small = new IsolateExecutor({
      timeout: 10_000,
      pool: { maxWorkers: 1, spare: 0 },
      limits: { maxConcurrentToolArgsBytes: 1000 },
    });
    try {
      const outcome = await small.execute({
        code: 'async () => { try { await api.send("y".repeat(2000)) } catch (e) { return e.message } }',
        providers,
        dispatch: async () => '{"result":"ok"}',
      });
      expect(outcome).toEqual({ result: isolateText.toolArgsOverWaitingCap(2004, 1000), logs: [] });
    } finally {
      await small.dispose();
    }
  });
});

describe('a module named outside the module root', () => {
  it.each(['../../etc/passwd.js', '/etc/passwd.js', 'lib/../../x.js'])('refuses %s by name', async (name) => {
    const run = executor.execute({ code: 'async () => 1', modules: { [name]: 'export default 1' } });
    await expect(run).rejects.toBeInstanceOf(ExecutorError);
    await expect(run).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: isolateText.moduleNameOutside(name) });
  });

  it('still loads a module whose ".." stays inside the root', async () => {
    const outcome = await executor.execute({
      code: 'import { x } from "lib/../x.js";\nasync () => x',
      modules: { 'lib/../x.js': 'export const x = 7' },
    });
    expect(outcome).toEqual({ result: 7, logs: [] });
  });
});

describe("an outcome over workerd's RPC limit", () => {
  it('fails with a text naming the frame cap and the RPC cap, and keeps its logs', async () => {
    // 15 MiB of value and 3 MiB of control characters in the logs, 18 MiB once escaped: under
    // the frame cap, over the 32 MiB workerd's RPC carries inside the member.
    const outcome = await executor.execute({
      code: 'async () => { for (let i = 0; i < 3; i++) console.log("\\u0001".repeat(2 ** 20)); return "x".repeat(15 * 2 ** 20) }',
    });
    const size = Number(/^The execution's outcome is (\d+) bytes/.exec(String(outcome.error))?.[1]);
    expect(size).toBeGreaterThan(MAX_OUTCOME_RPC_BYTES);
    expect(size).toBeLessThan(maxSupervisorFrameBytes(DEFAULT_LIMITS));
    expect(outcome.error).toBe(
      isolateText.outcomeTooLarge(size, maxSupervisorFrameBytes(DEFAULT_LIMITS), MAX_OUTCOME_RPC_BYTES),
    );
    expect(outcome.logs).toEqual(Array(3).fill({ level: 'log', message: '\u0001'.repeat(MIB) }));
    await assertNextRunSucceeds();
  });
});
