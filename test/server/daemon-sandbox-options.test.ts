/**
 * The daemon's sandbox options end to end: a request's cpuTimeout over connect(), the sandbox
 * flags reaching the daemon's IsolateExecutor, the start-up line that says whether its members
 * are confined, and why, and the pool's counts and each run's CPU time in /metrics.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { formatCpuTimeout } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { metricValue, startAdminDaemon, startDaemon, stopAllDaemons } from '../support/daemon.js';
import { openRawSession } from '../support/raw-session.js';

afterAll(stopAllDaemons);

const SPIN = 'async () => { while (true) {} }';

describe('cpuTimeout over connect()', () => {
  it('ends a spin at its CPU bound long before its wall-clock bound, and the next run succeeds', async () => {
    const daemon = await startDaemon();
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      const outcome = await executor.execute({ code: SPIN, cpuTimeout: 300, timeout: 120_000 });
      expect(outcome).toEqual({
        result: undefined,
        error: formatCpuTimeout(300),
        ending: { code: 'CPU_TIMEOUT', cpuTimeout: 300 },
        logs: [],
      });
      await expect(executor.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
    } finally {
      await executor.dispose();
    }
  });

  it('refuses a cpuTimeout that is not a number by its field, and one that is no bound by the executor', async () => {
    const daemon = await startDaemon();
    const raw = await openRawSession(daemon.url);
    try {
      const refusal = (request: Record<string, unknown>) =>
        raw.remote.execute!({ code: 'async () => 1', dispatch: null, outboundMode: 'default', ...request }).then(
          () => undefined,
          (error: { code?: unknown; message?: unknown }) => [error.code, error.message],
        );
      expect(await refusal({ cpuTimeout: '1s' })).toEqual([
        'INVALID_REQUEST',
        'execute: request.cpuTimeout must be a number or absent, got "1s"',
      ]);
      expect(await refusal({ cpuTimeout: -5 })).toEqual([
        'INVALID_REQUEST',
        "request.cpuTimeout must be a positive finite number of milliseconds of CPU time, or undefined (the executor's default), got -5.",
      ]);
    } finally {
      raw.close();
    }
  });
});

describe('the sandbox flags', () => {
  it('--cpu-timeout bounds a request that sets none, and a request may set its own', async () => {
    const daemon = await startDaemon(['--cpu-timeout', '200']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      await expect(executor.execute({ code: SPIN, timeout: 120_000 })).resolves.toMatchObject({
        error: formatCpuTimeout(200),
      });
      await expect(executor.execute({ code: SPIN, timeout: 120_000, cpuTimeout: 400 })).resolves.toMatchObject({
        error: formatCpuTimeout(400),
      });
    } finally {
      await executor.dispose();
    }
  });

  it('--memory-limit-mb and the size caps reach the executor: their texts name the values given', async () => {
    const daemon = await startDaemon(['--memory-limit-mb', '128', '--max-log-lines', '2', '--max-result-bytes', '64']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      const bomb = await executor.execute({
        code: 'async () => { const held = []; for (let i = 0; i < 40; i++) held.push(new Uint8Array(16 * 2 ** 20).fill(1)); return held.length }',
      });
      expect(bomb.error).toMatch(/^The execution ran out of memory: it is capped at 128 MB \(pool\.memoryLimitMb\)/);
      const chatty = await executor.execute({
        code: 'async () => { for (let i = 0; i < 5; i++) console.log(i); return 1 }',
      });
      expect(chatty.result).toBe(1);
      expect(chatty.logs.map((entry) => entry.message).slice(0, 2)).toEqual(['0', '1']);
      expect(chatty.logs.at(-1)?.message).toMatch(/^\[The logs were cut here: an execution keeps at most 2 lines /);
      const large = await executor.execute({ code: 'async () => "x".repeat(1000)' });
      expect(large.error).toMatch(/above the cap of 64 bytes \(limits\.maxResultBytes\)/);
    } finally {
      await executor.dispose();
    }
  });
});

describe('the start-up log', () => {
  it('says whether members are confined and why, after the listening line', async () => {
    const off = await startDaemon(['--confinement', 'off']);
    await off.waitForLine(/^workerd confinement /);
    expect(off.lines.slice(0, 2)).toEqual([
      `listening on ${off.url}`,
      "workerd confinement off (option 'off'): confinement is 'off'",
    ]);
    const auto = await startDaemon();
    const line = await auto.waitForLine(/^workerd confinement /);
    expect(line).toMatch(/^workerd confinement (on|off) \(option 'auto'\): \S/);
  });
});

describe('the pool in /metrics', () => {
  it('shows the memory budget and its use', async () => {
    const daemon = await startAdminDaemon(['--memory-budget-mb', '200', '--spare', '0']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const metric = (sample: string) => metricValue(daemon, `codemode_executor_${sample}`);
    try {
      expect(await metric('pool_memory_budget_bytes')).toBe(200 * 2 ** 20);
      const waiting = executor.execute({
        code: 'async () => { await new Promise((r) => setTimeout(r, 2000)); return 1 }',
      });
      // A member running it: its own memory and the binary's pages, some 40 MB.
      await expect.poll(() => metric('pool_memory_used_bytes'), { timeout: 20_000 }).toBeGreaterThan(16 * 2 ** 20);
      expect(await metric('pool_memory_used_bytes')).toBeLessThanOrEqual(200 * 2 ** 20);
      await expect(waiting).resolves.toMatchObject({ result: 1 });
    } finally {
      await executor.dispose();
    }
  });

  it("counts members started and ended by cause, members by state, and each run's CPU time", async () => {
    const daemon = await startAdminDaemon(['--max-workers', '3', '--spare', '0', '--idle-timeout-ms', '0']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const metric = (sample: string) => metricValue(daemon, `codemode_executor_${sample}`);
    try {
      expect(await metric('pool_max_workers')).toBe(3);
      // The daemon's one start-up probe (readiness.ts) is a run too.
      const cpuCount = 'execution_cpu_seconds_count{kind="execute"}';
      await expect.poll(() => metric(cpuCount), { timeout: 20_000 }).toBe(1);
      await expect(executor.execute({ code: 'async () => 1' })).resolves.toMatchObject({ result: 1 });
      await expect(executor.execute({ code: SPIN, cpuTimeout: 200 })).resolves.toMatchObject({
        error: formatCpuTimeout(200),
      });
      // Every member it started (readiness probes included) has ended: one killed at its CPU bound,
      // the rest reaped once idle.
      await expect.poll(() => metric('pool_members{state="idle"}'), { timeout: 20_000 }).toBe(0);
      const started = await metric('pool_members_started_total');
      expect(started).toBeGreaterThanOrEqual(2);
      expect(await metric('pool_members_ended_total{cause="killed"}')).toBe(1);
      await expect
        .poll(() => metric('pool_members_ended_total{cause="reaped"}'), { timeout: 20_000 })
        .toBe(started - 1);
      expect(await metric('pool_members_ended_total{cause="died"}')).toBe(0);
      expect(await metric(cpuCount)).toBe(3);
      // The spin's CPU time is at least its bound: it lands above the 0.1 s bucket, the trivial runs below.
      expect(await metric('execution_cpu_seconds_bucket{le="0.1",kind="execute"}')).toBe(2);
      expect(await metric('execution_cpu_seconds_bucket{le="+Inf",kind="execute"}')).toBe(3);
    } finally {
      await executor.dispose();
    }
  });
});
