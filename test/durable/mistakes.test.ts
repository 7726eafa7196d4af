/**
 * A host's first-hour mistakes with the state get the state's own texts, not upstream's text about
 * a Vite plugin: a forgotten `await openDurableState(...)` fails at the first touch saying to await
 * it, and an `exports` without the class upstream's runtime asks for is warned about, naming it.
 */
import '../../src/register/index.js';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodemodeRuntime, createCodemodeRuntime } from '@cloudflare/codemode';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openDurableState } from '../../src/durable/index.js';

/** Neither mistake gets as far as running code. */
const unreachedExecutor = {
  execute(): never {
    throw new Error('the executor was reached');
  },
};

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-mistakes-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('a forgotten await fails at the first touch, in upstream too, saying to await it', async () => {
  const opening = openDurableState({ path: dir, exports: { CodemodeRuntime } });
  try {
    expect(() => (opening as unknown as { storage: unknown }).storage).toThrow(
      expect.objectContaining({
        code: 'STATE_NOT_AWAITED',
        message:
          'openDurableState() returns a Promise, and .storage was read from the Promise, not from the state: await it first (`const ctx = await openDurableState({ path, exports })`), then pass ctx.',
      }),
    );
    const runtime = createCodemodeRuntime({
      ctx: opening as never,
      executor: unreachedExecutor as never,
      connectors: [],
    });
    // Upstream throws it synchronously from execute(); the async wrapper takes either way.
    const outcome = await (async () => runtime.execute({ code: 'async () => 1' }))().then(
      (value) => JSON.stringify(value),
      (error: Error) => error.message,
    );
    expect(outcome).toContain('openDurableState() returns a Promise, and .exports was read from the Promise');
  } finally {
    await (await opening).close();
  }
});

it('an exports without the class a facet asks for is warned about, naming the class and the fix', async () => {
  const ctx = await openDurableState({ path: dir, exports: {} });
  try {
    const warned = once(process, 'warning') as Promise<[Error & { code?: string }]>;
    const runtime = createCodemodeRuntime({ ctx: ctx as never, executor: unreachedExecutor as never, connectors: [] });
    await (async () => runtime.execute({ code: 'async () => 1' }))().catch(() => undefined);
    const [warning] = await warned;
    expect(warning.code).toBe('STATE_EXPORT_MISSING');
    expect(warning.message).toBe(
      'ctx.exports has no "CodemodeRuntime", which was just asked for (it is empty). A facet\'s class must be among openDurableState()\'s exports, as a Worker entry exports it: openDurableState({ path, exports: { CodemodeRuntime } }).',
    );
  } finally {
    await ctx.close();
  }
});
