/**
 * Upstream's own runtime (`createCodemodeRuntime`, @cloudflare/codemode 0.5.6) in a Node host, on
 * the durable state and our executor: (a) IsolateExecutor in process and (b) connect() to a
 * daemon. The expected statuses and texts are upstream's (see docs/durable-state.md); the ledger's
 * counters show which calls really ran.
 */
import '../../src/register/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodemodeRuntime, createCodemodeRuntime } from '@cloudflare/codemode';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { describeOnBothExecutors } from '../hosts/support/on-both-executors.js';
import { type LedgerBook, ledgerConnector, newBook } from './support/ledger.js';

const READ_THEN_DEPOSIT = `async () => {
  const before = await ledger.balance();
  const after = await ledger.deposit({ amount: 5 });
  return { before, after };
}`;

describeOnBothExecutors("upstream's runtime on the durable state", (executor) => {
  let dir: string;
  let ctx: DurableState;
  let book: LedgerBook;
  const runtime = () =>
    createCodemodeRuntime({ ctx: ctx as never, executor: executor(), connectors: [ledgerConnector(book)] });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-runtime-'));
    ctx = await openDurableState({ path: dir, exports: { CodemodeRuntime } });
    book = newBook(100);
  });

  afterEach(async () => {
    await ctx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a read, pauses on an approval-gated write, and completes on approve without re-reading', async () => {
    const handle = runtime();
    const first = await handle.execute({ code: READ_THEN_DEPOSIT });
    expect(first.status).toBe('paused');
    expect(await handle.pending(first.executionId)).toEqual([
      { executionId: first.executionId, seq: 1, connector: 'ledger', method: 'deposit', args: { amount: 5 } },
    ]);
    expect(book).toMatchObject({ balance: 100, ran: { balance: 1 } });

    const approved = await handle.approve({ executionId: first.executionId });
    expect(approved).toMatchObject({
      status: 'completed',
      executionId: first.executionId,
      result: { before: 100, after: 105 },
    });
    // The read replays from the log; only the approved write runs.
    expect(book.ran).toEqual({ balance: 1, deposit: 1 });
    const [execution] = await handle.executions();
    expect(execution).toMatchObject({ id: first.executionId, status: 'completed', connectors: ['ledger'] });
  });

  it('rejects a pending write: the run ends rejected and the write never runs', async () => {
    const handle = runtime();
    const first = await handle.execute({ code: READ_THEN_DEPOSIT });
    expect(await handle.reject({ executionId: first.executionId, seq: 1 })).toBe(true);
    expect(await handle.reject({ executionId: first.executionId, seq: 1 })).toBe(false);
    const [execution] = await handle.executions();
    expect(execution).toMatchObject({ status: 'rejected', error: 'Action ledger.deposit rejected by user' });
    expect(book.ran).toEqual({ balance: 1 });
    expect(await handle.pending()).toEqual([]);
  });

  it('rolls back applied writes in reverse order, including one that needed no approval', async () => {
    const handle = runtime();
    const code = `async () => {
      await ledger.note({ text: "first" });
      return await ledger.deposit({ amount: 7 });
    }`;
    const first = await handle.execute({ code });
    const approved = await handle.approve({ executionId: first.executionId });
    expect(approved).toMatchObject({ status: 'completed', result: 107 });
    await handle.rollback({ executionId: first.executionId });
    expect(book.reverted).toEqual(['deposit 7', 'note first']);
    expect(book).toMatchObject({ balance: 100, notes: [] });
    const [execution] = await handle.executions();
    expect(execution?.status).toBe('rolled_back');
  });

  it('runs a saved snippet through codemode.run, nested in a running execution', async () => {
    const handle = runtime();
    const saved = await handle.execute({ code: 'async (input) => (await ledger.balance()) + (input?.extra ?? 0)' });
    expect(saved).toMatchObject({ status: 'completed', result: 100 });
    await handle.saveSnippet('balance-plus', { executionId: saved.executionId, description: 'The balance plus extra' });
    expect((await handle.snippets()).map((snippet) => snippet.name)).toEqual(['balance-plus']);

    const ran = await handle.execute({ code: 'async () => await codemode.run("balance-plus", { extra: 3 })' });
    expect(ran).toMatchObject({ status: 'completed', result: 103 });
    expect(book.ran).toEqual({ balance: 2 });
  });

  it('fails the run whose tool call would take the state past maxStateBytes, with its text, and keeps the record', async () => {
    const small = await mkdtemp(join(tmpdir(), 'durable-runtime-small-'));
    const state = await openDurableState({ path: small, exports: { CodemodeRuntime }, maxStateBytes: 2 * 1024 * 1024 });
    try {
      const handle = createCodemodeRuntime({
        ctx: state as never,
        executor: executor(),
        connectors: [ledgerConnector(book)],
      });
      // Each note's argument, 300 KB, goes to the facet's log: the seventh or so does not fit.
      const code = `async () => {
        const text = 'x'.repeat(300000);
        for (let i = 0; i < 20; i++) await ledger.note({ text });
        return 'all noted';
      }`;
      const file = join(small, 'facets', 'codemode%3Adefault', 'state.sqlite');
      const full = `Durable state database ${file} is full: it may hold 2097152 bytes (openDurableState's maxStateBytes)`;
      const outcome = await handle.execute({ code });
      expect(outcome).toMatchObject({ status: 'error', error: expect.stringContaining(full) });
      const [execution] = await handle.executions();
      expect(execution).toMatchObject({ status: 'error', error: expect.stringContaining(full) });
      expect(execution?.log.length).toBeGreaterThan(2);
      expect(execution?.log.length).toBeLessThan(20);
    } finally {
      await state.close();
      await rm(small, { recursive: true, force: true });
    }
  });
});
