/**
 * bundlePackages' registryDir (src/bundle/registry.ts): a range fetched from the npm registry by
 * npm into a directory of its own, run in the sandbox, and not fetched again once it is there.
 * Reaches the real npm registry.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { bundlePackages } from '../../src/bundle/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { IsolateExecutor } from '../../src/isolate/index.js';

const registryDir = mkdtempSync(join(tmpdir(), 'codemode-bundle-registry-'));
afterAll(() => rmSync(registryDir, { recursive: true, force: true }));

it('fetches a range the host has not installed, runs it, and reads it from the directory after', async () => {
  // uuid 9, where the repository installs 14: only the registry has it.
  const modules = await bundlePackages(['uuid@^9'], { registryDir });
  const fetched = JSON.parse(
    readFileSync(join(registryDir, 'uuid@^9', 'node_modules', 'uuid', 'package.json'), 'utf8'),
  );
  expect(fetched.version).toMatch(/^9\./);
  const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
  try {
    const result = await executor.execute(
      "async () => { const { v5, version } = await import('uuid'); return [v5('https://example.com/a', v5.URL), version(v5('x', v5.URL))] }",
      [],
      { modules },
    );
    // Python's uuid.uuid5(uuid.NAMESPACE_URL, 'https://example.com/a').
    expect(result).toEqual({ result: ['6639460f-3425-5329-8097-a58f06127860', 5], logs: [] });
  } finally {
    await executor.dispose();
  }
  // A fresh module instance with no npm on PATH: the fetched range is read from the directory.
  const path = process.env.PATH;
  process.env.PATH = '';
  try {
    vi.resetModules();
    const fresh = (await import('../../src/bundle/index.js')).bundlePackages;
    expect((await fresh(['uuid@^9'], { registryDir })).uuid!.js).toBe(modules.uuid!.js);
    await expect(fresh(['uuid@^8'], { registryDir })).rejects.toThrow(
      /^Cannot fetch "uuid@\^8" from the npm registry \(bundlePackages option registryDir\): /,
    );
  } finally {
    process.env.PATH = path;
  }
}, 180_000);
