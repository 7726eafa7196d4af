/**
 * docs/moving-a-host.md's Worker host on the runtime, run as the page shows it: its block goes
 * into a Worker of its own under `wrangler dev` (a Durable Object holding upstream's runtime, its
 * executor `CodemodeExecutor(await connect(url))`), against a daemon. A run reads, pauses at the
 * gated write, and completes once approved, with upstream's statuses; the package name resolves
 * to this repository's root entry.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../../harness/processes.js';
import { startDaemonProcess } from '../../harness/processes.js';
import { startWranglerDev } from '../../harness/reference/wrangler.js';
import { taggedSnippet } from '../package/markdown.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** A cold `wrangler dev` on a busy two-core machine. */
const READY_TIMEOUT_MS = 180_000;

describe("docs/moving-a-host.md's Worker host on the runtime", () => {
  let dir: string;
  let daemon: Service | undefined;
  let dev: Service | undefined;

  const post = async (body: object): Promise<Record<string, unknown>> => {
    const response = await fetch(dev!.url, { method: 'POST', body: JSON.stringify(body) });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    const page = await readFile(join(ROOT, 'docs', 'moving-a-host.md'), 'utf8');
    const worker = taggedSnippet(page, 'worker-host');
    if (worker === undefined) throw new Error('docs/moving-a-host.md shows no ```ts worker-host block');
    // Inside the repository, so the Worker's imports resolve from its node_modules.
    dir = await mkdtemp(join(ROOT, 'test', 'hosts', '.worker-host-'));
    await writeFile(join(dir, 'worker.ts'), worker);
    daemon = await startDaemonProcess({ label: 'worker host', args: [] });
    const config = {
      name: 'worker-host-doc',
      main: 'worker.ts',
      compatibility_date: '2025-06-01',
      compatibility_flags: ['enable_ctx_exports'],
      durable_objects: { bindings: [{ name: 'CHAT', class_name: 'Chat' }] },
      migrations: [{ tag: 'v1', new_sqlite_classes: ['Chat'] }],
      vars: { CODEMODE_EXECUTOR_URL: daemon.url },
      alias: { '@supolka/cloudflare-codemode-executor': join(ROOT, 'src', 'index.ts') },
    };
    await writeFile(join(dir, 'wrangler.json'), JSON.stringify(config));
    dev = await startWranglerDev('worker host', join(dir, 'wrangler.json'), READY_TIMEOUT_MS);
  }, READY_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    try {
      await Promise.all([dev?.stop(), daemon?.stop()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('pauses at the gated write and completes once approved, the read replayed', async () => {
    const code = `async () => {
      const before = await notes.list({});
      const added = await notes.add({ text: 'call mum' });
      return { before, added };
    }`;
    const paused = await post({ conversation: 'alice', code });
    expect(paused).toMatchObject({
      status: 'paused',
      pending: [{ seq: 1, connector: 'notes', method: 'add', args: { text: 'call mum' } }],
    });
    // Another conversation is another Durable Object: it has nothing pending and nothing to approve.
    expect(await post({ conversation: 'bob', approve: paused.executionId })).toMatchObject({ status: 'error' });
    const completed = await post({ conversation: 'alice', approve: paused.executionId });
    expect(completed).toMatchObject({
      status: 'completed',
      executionId: paused.executionId,
      result: { before: ['buy milk'], added: { added: 'call mum' } },
    });
    expect((completed.calls as Array<{ state: string }>).map((call) => call.state)).toEqual(['applied', 'applied']);
  }, 120_000);
});
