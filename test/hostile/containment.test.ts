/**
 * The hostile corpus of issue 10, on the real workerd: each program an attacker would write to
 * crash or hang the host, poison another run, or take memory beyond its bound. Every case asserts
 * its outcome, that the next execution succeeds, and (through the setup file) that nothing
 * rejected unhandled; the suite ends with no process left behind. It runs at each isolation
 * level: the default (one execution per process), and the tenant level (`pool.runsPerMember`),
 * where the hostile programs run as one tenant and the next execution as another, so what holds
 * between executions at the default holds between tenants there.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryGuardThread } from '../../src/isolate/host/member/memory-guard.js';
import { DEFAULT_LIMITS, MAX_OUTCOME_RPC_BYTES, maxSupervisorFrameBytes } from '../../src/isolate/host/options.js';
import { isolateText } from '../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import { ExecutionTimeoutError } from '../../src/protocol/errors.js';
import { FUNCTION_NOT_RETAINED_MESSAGE, INERT_FUNCTION_TEXT } from '../../src/protocol/texts.js';
import {
  type ExecuteRequest,
  type ExecutorCallOptions,
  HANDLE_KEY,
  type InvokeHandleRequest,
} from '../../src/protocol/types.js';
import { withSlack } from '../support/machine-slack.js';
import { isAlive, SPIN_TURN_GRACE_MS, waitFor } from '../support/processes.js';

const MIB = 2 ** 20;
const MEMORY_LIMIT_MB = 256;
const HEAP_LIMIT_MB = 64;
const LIMITS = {
  // Above maxRequestBytes, so a large program meets the request cap, not the code cap.
  maxCodeBytes: 4 * MIB,
  maxRequestBytes: MIB,
  maxResultBytes: MIB,
  maxToolArgsBytes: MIB,
  maxToolResultBytes: MIB,
  maxLogLines: 1000,
  maxLogBytes: 256 * 1024,
  maxRequestBodyBytes: MIB,
  maxResponseBodyBytes: MIB,
  maxConcurrentFetches: 50,
};

/** What the outbound function saw, and how much of a streamed response it was asked for. */
const outboundSeen = { calls: 0, pulledBytes: 0 };

const everyPid = new Set<number>();

/** Each level the corpus runs at: its `runsPerMember`, and the tenants of the hostile runs and of the next one. */
const LEVELS = [
  { name: 'the default level', runsPerMember: 1, hostile: undefined, neighbour: undefined },
  { name: 'the tenant level, two tenants', runsPerMember: 2, hostile: 'hostile', neighbour: 'neighbour' },
];

describe.each(LEVELS)('$name', (level) => {
  let pool: IsolateExecutor;
  /** The pool as the hostile tenant calls it: every execution names that tenant. */
  const executor = {
    execute: (request: ExecuteRequest, options?: ExecutorCallOptions) =>
      pool.execute({ tenant: level.hostile, ...request }, options),
    invokeHandle: (request: InvokeHandleRequest) => pool.invokeHandle(request),
    closeHandles: (executionId: string) => pool.closeHandles(executionId),
    stats: () => pool.stats(),
  };

  function track(): void {
    for (const member of executor.stats().members) everyPid.add(member.pid);
  }

  beforeAll(() => {
    pool = new IsolateExecutor({
      timeout: 5_000,
      maxTimeout: 60_000,
      turnGraceMs: SPIN_TURN_GRACE_MS,
      outbound: async (request) => {
        outboundSeen.calls += 1;
        const url = new URL(request.url);
        if (url.pathname === '/endless') {
          // A response of a gigabyte, made only as fast as it is read.
          const chunk = new Uint8Array(64 * 1024).fill(7);
          let sent = 0;
          return new Response(
            new ReadableStream({
              pull(controller) {
                if (sent >= 1024 * MIB) return controller.close();
                sent += chunk.byteLength;
                outboundSeen.pulledBytes += chunk.byteLength;
                controller.enqueue(chunk);
              },
            }),
          );
        }
        if (url.pathname === '/slow') await new Promise((resolve) => setTimeout(resolve, 300));
        return new Response(`answered ${request.method}`);
      },
      pool: {
        maxWorkers: 1,
        spare: 1,
        heapLimitMb: HEAP_LIMIT_MB,
        memoryLimitMb: MEMORY_LIMIT_MB,
        runsPerMember: level.runsPerMember,
      },
      limits: LIMITS,
    });
  });

  afterAll(async () => {
    track();
    await pool.dispose();
    await waitFor(() => [...everyPid].every((pid) => !isAlive(pid)), 'every workerd of the suite to end');
  });

  async function assertNextRunSucceeds(): Promise<void> {
    expect(await executor.execute({ code: 'async () => "next"', tenant: level.neighbour })).toEqual({
      result: 'next',
      logs: [],
    });
    track();
  }

  function cpuMsOf(pid: number): number {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }

  /** Samples the kernel's peak RSS (VmHWM) of every member while `work` runs, in MB. */
  async function peakRssDuring(work: Promise<unknown>): Promise<number> {
    let peak = 0;
    let done = false;
    void work.finally(() => (done = true));
    while (!done) {
      for (const member of executor.stats().members) {
        everyPid.add(member.pid);
        try {
          const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${member.pid}/status`, 'utf8'));
          if (match !== null) peak = Math.max(peak, Number(match[1]) / 1024);
        } catch {
          // Ended between the list and the read.
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return peak;
  }

  describe('row 1: relayed requests the host cannot represent', () => {
    it('makes a TRACE a fetch error in the sandbox, and relays a GET whose headers announce a body', async () => {
      const before = outboundSeen.calls;
      const outcome = await executor.execute({
        code: `async () => {
        const out = [];
        try { await fetch('http://x.test/', { method: 'TRACE' }); out.push('sent') } catch (e) { out.push(e.message) }
        out.push(await (await fetch('http://x.test/', { headers: { 'content-length': '5' } })).text());
        out.push(await (await fetch('http://x.test/', { headers: { 'transfer-encoding': 'chunked' } })).text());
        return out;
      }`,
      });
      expect(outcome.result).toEqual([
        isolateText.relayRequestRefused("'TRACE' HTTP method is unsupported."),
        'answered GET',
        'answered GET',
      ]);
      expect(outboundSeen.calls - before).toBe(2);
      await assertNextRunSucceeds();
    });
  });

  describe('row 2: functions in a result', () => {
    it('are functions under toJSON, toString, valueOf and then that run nothing of the sandbox, so a host can stringify, print and await the result', async () => {
      const outcome = await executor.execute({
        code: 'async () => ({ answer: 42, toJSON() {}, toString() {}, valueOf() {}, then: undefined, other: () => 1 })',
      });
      const value = outcome.result as Record<string, unknown>;
      expect(JSON.stringify(outcome)).toBe('{"result":{"answer":42},"logs":[]}');
      for (const key of ['toJSON', 'toString', 'valueOf']) {
        expect(typeof value[key]).toBe('function');
        expect(String(value[key])).toBe(INERT_FUNCTION_TEXT);
      }
      expect(String(value)).toBe(INERT_FUNCTION_TEXT);
      expect((value.valueOf as () => unknown)()).toBe(value);
      await expect((value.other as () => Promise<unknown>)()).rejects.toMatchObject({
        code: 'HANDLE_NOT_FOUND',
        message: FUNCTION_NOT_RETAINED_MESSAGE,
      });
      const thenable = await executor.execute({ code: 'async () => [{ a: 1, then() {} }]' });
      const [inner] = thenable.result as Record<string, unknown>[];
      expect(typeof inner!.then).toBe('function');
      // Awaiting it settles at once, with the object's other keys.
      expect(await Promise.resolve(inner)).toEqual({ a: 1 });
      await assertNextRunSucceeds();
    });
  });

  describe('row 3: work kept alive past the result', () => {
    it('ends waitUntil work with its run: the process does not burn CPU, and the next run is not slowed', async () => {
      const outcome = await executor.execute({
        code: 'async () => { this.ctx.waitUntil(new Promise((r) => setTimeout(() => { while (true) {} }, 50))); return "ok" }',
      });
      expect(outcome).toEqual({ result: 'ok', logs: [] });
      const [member] = executor.stats().members.filter((candidate) => !candidate.busy);
      const pid = member!.pid;
      const before = cpuMsOf(pid);
      await new Promise((resolve) => setTimeout(resolve, 400));
      // A spin would have burned the whole 400 ms; a quiet process a tick or two.
      expect(cpuMsOf(pid) - before).toBeLessThan(200);
      expect(await executor.execute({ code: 'async () => "unrelated"', timeout: 3_000 })).toEqual({
        result: 'unrelated',
        logs: [],
      });
    });

    it("ends it in a retained execution too, whose worker stays loaded, even through waitUntil's prototype", async () => {
      const outcome = await executor.execute({
        code: `async () => {
        const spin = () => new Promise((r) => setTimeout(() => { while (true) {} }, 50));
        this.ctx.waitUntil(spin());
        let bypass = 'refused';
        try { Object.getPrototypeOf(this.ctx).waitUntil.call(this.ctx, spin()); bypass = 'accepted' } catch {}
        return { bypass, later: () => 'called' };
      }`,
        retainHandles: true,
      });
      const value = outcome.result as { bypass: string; later: Record<string, string> };
      expect(value.bypass).toBe('refused');
      const pid = executor.stats().members.find((member) => member.retained === 1)!.pid;
      const before = cpuMsOf(pid);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(cpuMsOf(pid) - before).toBeLessThan(200);
      const handle = value.later[HANDLE_KEY]!;
      expect((await executor.invokeHandle({ executionId: outcome.executionId!, handle })).result).toBe('called');
      await executor.closeHandles(outcome.executionId!);
      await assertNextRunSucceeds();
    });

    it('does not let held work pile up across runs', async () => {
      const code =
        'async () => { const held = new Uint8Array(5 * 2 ** 20).fill(1); this.ctx.waitUntil(new Promise((r) => setTimeout(() => r(held.length), 60_000))); return "held" }';
      await executor.execute({ code });
      // The member that ran it is idle again (one that held a closed retained execution is ending).
      const pid = executor.stats().members.find((member) => member.runs > 0 && member.state === 'idle')!.pid;
      const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
      const before = rssOf();
      for (let i = 0; i < 10; i++) {
        expect((await executor.execute({ code })).result).toBe('held');
      }
      // Ten runs holding 5 MB each would add 50 MB if the work outlived them.
      expect(rssOf() - before).toBeLessThan(30);
    });
  });

  describe('row 4: one execution, one memory cap', () => {
    const programs: [string, string][] = [
      [
        'many buffers',
        'async () => { const a = []; for (let i = 0; i < 60; i++) a.push(new Uint8Array(100 * 2 ** 20).fill(1)); return a.length }',
      ],
      [
        'one huge ArrayBuffer',
        'async () => { const b = new ArrayBuffer(4e9); new Uint8Array(b).fill(1); return b.byteLength }',
      ],
      [
        'WebAssembly memory grown to its maximum',
        'async () => { const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); while (true) { m.grow(160); new Uint8Array(m.buffer).fill(1) } }',
      ],
    ];
    for (const [what, code] of programs) {
      it(`ends ${what} with the cap's text, within the cap plus 64 MB`, async () => {
        const run = executor.execute({ code, timeout: 30_000 });
        const peak = await peakRssDuring(run);
        expect(await run).toEqual({
          result: undefined,
          error: isolateText.memoryLimit(MEMORY_LIMIT_MB),
          ending: { code: 'MEMORY_LIMIT', memoryLimitMb: MEMORY_LIMIT_MB },
          logs: [],
        });
        expect(peak).toBeLessThanOrEqual(MEMORY_LIMIT_MB + 64);
        await assertNextRunSucceeds();
      });
    }
  });

  describe('row 4b: the memory guard fails', () => {
    it('keeps the cap of a running execution: a new guard thread takes it over, and the host is warned', async () => {
      let asked!: () => void;
      const waiting = new Promise<void>((resolve) => (asked = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const dispatch = createEnvelopeDispatch(
        {
          gate: async () => {
            asked();
            await gate;
            return 'go';
          },
        },
        { active: true },
      );
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const run = executor.execute({
          code: 'async () => { await gate.wait(); const a = []; for (let i = 0; i < 12; i++) a.push(new Uint8Array(100 * 2 ** 20).fill(1)); return a.length }',
          providers: [{ name: 'gate', tools: ['wait'] }],
          dispatch,
          timeout: 30_000,
        });
        await waiting;
        const thread = memoryGuardThread();
        expect(thread).toBeDefined();
        await thread!.terminate();
        release();
        expect(await run).toEqual({
          result: undefined,
          error: isolateText.memoryLimit(MEMORY_LIMIT_MB),
          ending: { code: 'MEMORY_LIMIT', memoryLimitMb: MEMORY_LIMIT_MB },
          logs: [],
        });
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings).toEqual([isolateText.memoryGuardRestarted('it exited', 1)]);
      } finally {
        process.off('warning', onWarning);
      }
      await assertNextRunSucceeds();
    });
  });

  describe('row 5: outbound bodies', () => {
    it('refuses a request body over the cap in the sandbox, before anything reaches the host', async () => {
      const before = outboundSeen.calls;
      const outcome = await executor.execute({
        code: `async () => {
        const out = [];
        try { await fetch('http://x.test/', { method: 'POST', body: new Uint8Array(2 * 2 ** 20) }) } catch (e) { out.push(e.message) }
        let sent = 0;
        const endless = new ReadableStream({ pull(c) { if (sent > 2 ** 30) return c.close(); sent += 65536; c.enqueue(new Uint8Array(65536)) } });
        try { await fetch('http://x.test/', { method: 'POST', body: endless, duplex: 'half' }) } catch (e) { out.push(e.message) }
        return [out, sent < 8 * 2 ** 20];
      }`,
      });
      const text = isolateText.requestBodyTooLarge(LIMITS.maxRequestBodyBytes);
      expect(outcome.result).toEqual([[text, text], true]);
      expect(outboundSeen.calls).toBe(before);
      await assertNextRunSucceeds();
    });

    it('fails a fetch past the cap on fetches in flight at once, and frees the slot as each settles', async () => {
      const outcome = await executor.execute({
        code: `async () => {
        const flood = await Promise.allSettled(Array.from({ length: 120 }, () => fetch('http://x.test/slow')));
        const refused = flood.filter((one) => one.status === 'rejected').map((one) => one.reason.message);
        const answered = flood.filter((one) => one.status === 'fulfilled').length;
        const after = await (await fetch('http://x.test/')).text();
        return { answered, refused: refused.length, texts: [...new Set(refused)], after };
      }`,
        timeout: 30_000,
      });
      expect(outcome.result).toEqual({
        answered: LIMITS.maxConcurrentFetches,
        refused: 120 - LIMITS.maxConcurrentFetches,
        texts: [isolateText.tooManyFetches(LIMITS.maxConcurrentFetches)],
        after: 'answered GET',
      });
      await assertNextRunSucceeds();
    });

    it('stops reading a response body at the cap: a gigabyte stream is pulled only up to it', async () => {
      outboundSeen.pulledBytes = 0;
      const outcome = await executor.execute({
        code: 'async () => { try { await fetch("http://x.test/endless"); return "read it all" } catch (e) { return e.message } }',
      });
      expect(outcome.result).toBe(isolateText.responseBodyTooLarge(LIMITS.maxResponseBodyBytes));
      // The stream may run a few chunks ahead of the reader; nowhere near the gigabyte.
      expect(outboundSeen.pulledBytes).toBeLessThan(LIMITS.maxResponseBodyBytes + 16 * 64 * 1024);
      await assertNextRunSucceeds();
    });
  });

  describe('row 6: a result that is costly to rebuild', () => {
    it('ends 3e6 empty objects with a clear error naming a cap, before the host decodes them', async () => {
      const outcome = await executor.execute({
        code: 'async () => Array.from({ length: 3e6 }, () => ({}))',
        timeout: 30_000,
      });
      expect(outcome.result).toBeUndefined();
      // Whichever cap it meets first: the heap, the process's memory, or the result's size.
      const capTexts = [isolateText.outOfMemory(HEAP_LIMIT_MB), isolateText.memoryLimit(MEMORY_LIMIT_MB)];
      const named = capTexts.includes(outcome.error!) || /\(limits\.maxResultBytes\)/.test(outcome.error!);
      expect(named, outcome.error).toBe(true);
      await assertNextRunSucceeds();
    });
  });

  describe('row 7: a spin behind a host wait that never answers', () => {
    // The bound is CPU time, which a loaded host hands out slowly: the test's own limit stretches.
    it('is stopped at its bound by the process CPU time, though countHostWaits stopped the clock', {
      timeout: withSlack(20_000),
    }, async () => {
      const dispatch = createEnvelopeDispatch({ hang: () => new Promise(() => {}) }, { active: true });
      // The call reaches the host (its clock stops) before the spin holds the process's only thread.
      const outcome = await executor.execute({
        code: 'async () => { hang.forever(); await new Promise((r) => setTimeout(r, 50)); while (true) {} }',
        providers: [{ name: 'hang', tools: ['forever'] }],
        dispatch,
        timeout: 1_000,
        countHostWaits: false,
      });
      expect(outcome).toEqual({
        result: undefined,
        error: ExecutionTimeoutError.format(1_000),
        ending: { code: 'EXECUTION_TIMEOUT', timeout: 1_000 },
        logs: [],
      });
      await assertNextRunSucceeds();
    });
  });

  describe('row 8: sizes over a cap are reported as such, never as a dead sandbox', () => {
    it('fails a tool result over the cap in the sandbox, naming the cap', async () => {
      const dispatch = createEnvelopeDispatch({ big: () => 'x'.repeat(2 * MIB) }, { active: true });
      const outcome = await executor.execute({
        code: 'async () => { try { return (await big.get()).length } catch (e) { return e.message } }',
        providers: [{ name: 'big', tools: ['get'] }],
        dispatch,
      });
      expect(outcome.result).toBe(
        isolateText.toolResultTooLarge('get', 2 * MIB + '{"result":""}'.length, LIMITS.maxToolResultBytes),
      );
      await assertNextRunSucceeds();
    });

    it('fails tool arguments over the cap before the host sees them', async () => {
      let called = 0;
      const dispatch = createEnvelopeDispatch({ api: () => ++called }, { active: true });
      const outcome = await executor.execute({
        code: 'async () => { try { return await api.send("y".repeat(2 * 2 ** 20)) } catch (e) { return e.message } }',
        providers: [{ name: 'api', tools: ['send'] }],
        dispatch,
      });
      expect(outcome.result).toBe(isolateText.toolArgsTooLarge(2 * MIB + 4, LIMITS.maxToolArgsBytes));
      expect(called).toBe(0);
      await assertNextRunSucceeds();
    });

    it('refuses a program over the request cap before sending it, with a result naming the cap', async () => {
      const code = `async () => "${'z'.repeat(2 * MIB)}".length`;
      const outcome = await executor.execute({ code });
      expect(outcome.result).toBeUndefined();
      expect(outcome.error).toMatch(/above the cap of 1048576 bytes \(limits\.maxRequestBytes\)/);
      await assertNextRunSucceeds();
    });

    it('fails a result whose encoded form passes the cap, and does not call it retryable', async () => {
      // Two MiB of control characters: each becomes six bytes of JSON.
      const outcome = await executor.execute({ code: 'async () => "\\u0001".repeat(2 * 2 ** 20)' });
      expect(outcome.error).toBe(isolateText.resultTooLarge(12 * MIB + 2, LIMITS.maxResultBytes));
      expect(outcome.error).not.toMatch(/running it again/);
      await assertNextRunSucceeds();
    });
  });

  describe('row 9: a log flood', () => {
    it('keeps the result, and cuts the logs at the cap with one marker line', async () => {
      const outcome = await executor.execute({
        code: 'async () => { for (let i = 0; i < 1e5; i++) console.log("x".repeat(400)); return "done" }',
        timeout: 30_000,
      });
      expect(outcome.result).toBe('done');
      // The byte cap is met first here: 256 KiB hold 655 lines of 400 bytes.
      const kept = Math.min(LIMITS.maxLogLines, Math.floor(LIMITS.maxLogBytes / 400));
      expect(outcome.logs).toHaveLength(kept + 1);
      expect(outcome.logs.at(-1)).toEqual({
        level: 'warn',
        message: isolateText.logsCut(LIMITS.maxLogLines, LIMITS.maxLogBytes),
      });
      await assertNextRunSucceeds();
    });

    it('keeps its caps when a module that loads first calls into the harness to start the run itself', async () => {
      // A module of the map that learned the harness module's name (a program can read it off a
      // stack frame of the console capture) runs before the entry's evaluate: it starts the run
      // with caps of its own, then the program floods the logs.
      const outcome = await executor.execute({
        code: `import "./takeover.js";
async () => { for (let i = 0; i < 1e5; i++) console.log("x".repeat(400)); return "done" }`,
        modules: {
          'takeover.js': `let frames = "";
console.log({ toString() { frames = new Error().stack; return "" } });
const harness = await import(/\\(([^():]*_harness\\.js):/.exec(frames)[1]);
const huge = 2 ** 30;
try {
  harness.begin([{}, { run: "mine", bound: 1e9, limits: { maxLogLines: huge, maxLogBytes: huge, maxToolArgsBytes: huge, logsCut: "", toolArgsTooLarge: "" } }]);
} catch {}`,
        },
        timeout: 30_000,
      });
      expect(outcome.error).toBeUndefined();
      expect(outcome.result).toBe('done');
      const kept = Math.min(LIMITS.maxLogLines, Math.floor(LIMITS.maxLogBytes / 400));
      // The empty line the module wrote while it read the stack, then the flood up to the caps.
      expect(outcome.logs[0]).toEqual({ level: 'log', message: '' });
      expect(outcome.logs).toHaveLength(kept + 2);
      expect(outcome.logs.at(-1)?.message).toBe(isolateText.logsCut(LIMITS.maxLogLines, LIMITS.maxLogBytes));
      await assertNextRunSucceeds();
    });
  });

  describe('row 10: timers user code can clear', () => {
    it('times out a run that cleared every timer and settled 900 ms past its bound, by the clock', async () => {
      const outcome = await executor.execute({
        code: 'async () => { await Promise.resolve(); for (let i = 0; i < 1e5; i++) { clearTimeout(i); clearInterval(i) } console.log("cleared"); await new Promise((r) => setTimeout(r, 1_900)); return "late" }',
        timeout: 1_000,
      });
      // Its lines came back: the sandbox's race answered from the clock, no kill was needed.
      expect(outcome).toEqual({
        result: undefined,
        error: ExecutionTimeoutError.format(1_000),
        ending: { code: 'EXECUTION_TIMEOUT', timeout: 1_000 },
        logs: [{ level: 'log', message: 'cleared' }],
      });
      await assertNextRunSucceeds();
    });
  });

  describe('row 11: large results, one after another on one process', () => {
    it('returns 50,000 small objects every time, as the reference does', async () => {
      const single = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
      try {
        const pids = new Set<number>();
        // The abort struck about one run in two under load, so a dozen runs would all but surely meet it.
        for (let i = 0; i < 12; i++) {
          const outcome = await single.execute({
            code: 'async () => Array.from({ length: 50_000 }, (_, i) => ({ i, s: "v" + i }))',
            timeout: 30_000,
          });
          expect(outcome.error).toBeUndefined();
          expect((outcome.result as unknown[]).length).toBe(50_000);
          for (const member of single.stats().members) pids.add(member.pid);
        }
        // One process served them all: none aborted.
        expect(pids.size).toBe(1);
      } finally {
        await single.dispose();
      }
    });
  });

  describe('row 12: heap bombs', () => {
    const bombs = [
      'async () => { const hoard = []; while (true) hoard.push({ a: Math.random(), b: [1, 2, 3] }) }',
      'async () => { const hoard = []; while (true) hoard.push(new Array(1e5).fill(Math.random())) }',
    ];
    it('end with the out-of-memory text every time, not a timeout', async () => {
      for (const code of bombs) {
        for (let i = 0; i < 2; i++) {
          const outcome = await executor.execute({ code, timeout: 30_000 });
          expect(outcome).toEqual({
            result: undefined,
            error: isolateText.outOfMemory(HEAP_LIMIT_MB),
            ending: { code: 'OUT_OF_MEMORY', heapLimitMb: HEAP_LIMIT_MB },
            logs: [],
          });
          track();
        }
      }
      await assertNextRunSucceeds();
    });
  });

  describe("row 12b: a forged line of V8's heap trace", () => {
    // console.info is dropped in the sandbox now (docs/isolate.md, "Dropped console output"), and the
    // host must not rely on that either: a line alone never ends a run.
    it('does not end a run that prints one through console.info while its heap has room', async () => {
      const forged = `[1:0x1]    5 ms: Mark-Compact ${HEAP_LIMIT_MB * 2}.0 (${HEAP_LIMIT_MB * 2}.0) -> ${HEAP_LIMIT_MB * 2}.0 (${HEAP_LIMIT_MB * 2}.0) MB, 1.0 / 0.0 ms`;
      const outcome = await executor.execute({
        code: `async () => { for (let i = 0; i < 20; i++) { console.info(${JSON.stringify(forged)}); await new Promise((resolve) => setTimeout(resolve, 10)); } return "fine" }`,
      });
      expect(outcome).toEqual({ result: 'fine', logs: [] });
      await assertNextRunSucceeds();
    });
  });

  describe('row 13: the host-supervisor channel carries whatever the caps let through', () => {
    // Small result and log caps beside the default tool-argument cap: a frame sized from the first
    // two alone would be closed by the host's socket, ending the member mid-run.
    const limits = { maxResultBytes: MIB, maxLogBytes: 64 * 1024, maxLogLines: 100 };
    const FRAMED_CAP = maxSupervisorFrameBytes({ ...DEFAULT_LIMITS, ...limits });
    let framed: IsolateExecutor;
    beforeAll(() => {
      framed = new IsolateExecutor({ timeout: 30_000, pool: { maxWorkers: 1, spare: 0 }, limits });
    });
    afterAll(async () => {
      await framed.dispose();
    });

    it('answers a tool call whose arguments are under their cap but escape to more than the result and log caps', async () => {
      let received = 0;
      const dispatch = createEnvelopeDispatch(
        { api: (_tool, [text]) => (received = (text as string).length) },
        { active: true },
      );
      // Four MiB of quotes: eight as argument JSON, sixteen once that JSON is a string in the frame.
      const outcome = await framed.execute({
        code: 'async () => await api.send("\\"".repeat(4 * 2 ** 20))',
        providers: [{ name: 'api', tools: ['send'] }],
        dispatch,
      });
      expect(outcome).toEqual({ result: 4 * MIB, logs: [] });
      expect(received).toBe(4 * MIB);
    });

    it('fails in the sandbox a tool call whose name makes it too large for the channel, before the host sees it', async () => {
      let called = 0;
      const dispatch = createEnvelopeDispatch({ api: () => ++called }, { active: true });
      // Six MiB of control characters in the tool's name: 36 once escaped in the frame.
      const outcome = await framed.execute({
        code: 'async () => { try { return await api["\\u0001".repeat(6 * 2 ** 20)]() } catch (e) { return e.message } }',
        providers: [{ name: 'api', tools: ['send'] }],
        dispatch,
      });
      const size = Number(/^This tool call is (\d+) bytes/.exec(String(outcome.result))?.[1]);
      expect(size).toBeGreaterThan(6 * 6 * MIB);
      expect(outcome.result).toBe(isolateText.callTooLarge(size, FRAMED_CAP));
      expect(called).toBe(0);
    });

    it('fails a thrown text too large for the channel with a text naming the caps, not a dead sandbox', async () => {
      const outcome = await framed.execute({ code: 'async () => { throw new Error("\\u0001".repeat(8 * 2 ** 20)) }' });
      expect(outcome.result).toBeUndefined();
      const size = Number(/^The execution's outcome is (\d+) bytes/.exec(String(outcome.error))?.[1]);
      expect(size).toBeGreaterThan(6 * 8 * MIB);
      expect(outcome.error).toBe(isolateText.outcomeTooLarge(size, FRAMED_CAP, MAX_OUTCOME_RPC_BYTES));
      expect(await framed.execute({ code: 'async () => "next"' })).toEqual({ result: 'next', logs: [] });
    });
  });
});
