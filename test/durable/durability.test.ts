/**
 * Nothing is lost: a paused run survives its host process and is approved from a new one; a host
 * SIGKILLed while an approved write executes leaves what upstream's own state leaves after a dead
 * host (the run `running`, the write `executing`), and upstream's runtime then refuses `approve`
 * and expires the run with its own texts. Every host here is a real Node process on real SQLite
 * files and real workerd.
 */
import '../../src/register/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodemodeRuntime, createCodemodeRuntime } from '@cloudflare/codemode';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { openDurableState } from '../../src/durable/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { killAllHosts, runHost, startHost } from './support/host-process.js';
import { ledgerConnector, newBook } from './support/ledger.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-restart-'));
});

afterEach(async () => {
  await killAllHosts();
  await rm(dir, { recursive: true, force: true });
});

afterAll(killAllHosts);

it('approves, in a new process, a run paused by a process that has exited', async () => {
  const paused = await runHost(['pause', dir]);
  expect(paused).toMatchObject({
    status: 'paused',
    pending: [{ seq: 1, connector: 'ledger', method: 'deposit', args: { amount: 5 } }],
  });

  const approved = await runHost(['approve', dir, paused.executionId as string]);
  expect(approved.output).toMatchObject({
    status: 'completed',
    executionId: paused.executionId,
    result: { before: 100, after: 105 },
  });
  // The new process never read the balance: the read came from the log the first one wrote.
  expect(approved.ran).toEqual({ deposit: 1 });
});

it('after a SIGKILL mid-write, shows the run running and the write executing, refuses approve and expires it', async () => {
  const paused = await runHost(['pause', dir]);
  const executionId = paused.executionId as string;
  const host = startHost(['approve-hang', dir, executionId]);
  await host.line((line) => line.executing === true);
  host.child.kill('SIGKILL');
  expect((await host.exited).signal).toBe('SIGKILL');

  // Reopened at once: the dead host's lock went with it.
  const ctx = await openDurableState({ path: dir, exports: { CodemodeRuntime } });
  const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
  try {
    const runtime = createCodemodeRuntime({ ctx: ctx as never, executor, connectors: [ledgerConnector(newBook())] });
    const [execution] = await runtime.executions();
    expect(execution).toMatchObject({ id: executionId, status: 'running' });
    expect(execution?.log.map((entry) => [entry.method, entry.state])).toEqual([
      ['balance', 'applied'],
      ['deposit', 'executing'],
    ]);

    expect(await runtime.approve({ executionId })).toEqual({
      status: 'error',
      executionId,
      error: `Execution "${executionId}" is not paused (status: running); only a paused run can be approved.`,
    });

    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await runtime.expirePaused({ maxAgeMs: 0 })).toEqual([executionId]);
    const [expired] = await runtime.executions();
    expect(expired).toMatchObject({
      status: 'error',
      error: 'Expired while running — the host never completed the pass',
    });
  } finally {
    await executor.dispose();
    await ctx.close();
  }
});
