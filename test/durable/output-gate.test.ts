/**
 * The output gate (src/durable/output-gate.ts): a facet's writes wait in one transaction, but are
 * committed before anything outside the facet can act on them. A connector that SIGKILLs its host
 * the moment it starts runs in the same turn of the event loop as the runtime's `executing` write,
 * before any end-of-turn commit: only the gate at the stub boundary puts that write on disk first.
 * With `durability: 'process-crash'` the write reaches the operating system uncommitted to the
 * disk, which a SIGKILL of the process does not undo.
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
  dir = await mkdtemp(join(tmpdir(), 'durable-gate-'));
});

afterEach(async () => {
  await killAllHosts();
  await rm(dir, { recursive: true, force: true });
});

afterAll(killAllHosts);

it.each(['power-loss', 'process-crash'])(
  'durability %s: commits the `executing` write before the connector runs, though the connector kills its host in that turn',
  async (durability) => {
    const env = { HOST_DURABILITY: durability };
    const paused = await runHost(['pause', dir], { env });
    const executionId = paused.executionId as string;
    const host = startHost(['approve-die', dir, executionId], { env });
    expect((await host.exited).signal).toBe('SIGKILL');

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
    } finally {
      await executor.dispose();
      await ctx.close();
    }
  },
);
