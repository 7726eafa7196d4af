/**
 * bundlePackages' registryDir (src/bundle/registry.ts): a range fetched by npm from a registry into
 * a directory of its own, run in the sandbox, and not fetched again once it is there; a tarball
 * whose integrity is not the registry's is refused. The registry is one on loopback
 * (test/support/loopback-registry.ts) serving real tarballs that npm packs from fixtures.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { bundlePackages } from '../../src/bundle/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import {
  integrityOf,
  type LoopbackRegistry,
  packDirectory,
  startLoopbackRegistry,
} from '../support/loopback-registry.js';

const scratch = mkdtempSync(join(tmpdir(), 'codemode-bundle-registry-'));
const registryDir = join(scratch, 'fetched');
let registry: LoopbackRegistry;
const saved = {
  registry: process.env.npm_config_registry,
  cache: process.env.npm_config_cache,
  retries: process.env.npm_config_fetch_retries,
};

/** A package of one ES module that says its own version. */
function fixture(name: string, version: string): string {
  const dir = join(scratch, 'sources', `${name}-${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', exports: './index.js' }));
  writeFileSync(join(dir, 'index.js'), `export const greet = (who) => 'hello ' + who + ' from ${version}';\n`);
  return dir;
}

beforeAll(async () => {
  const [one, two, honest] = await Promise.all([
    packDirectory(fixture('codemode-greet', '1.4.0')),
    packDirectory(fixture('codemode-greet', '2.0.0')),
    packDirectory(fixture('codemode-tampered', '1.0.0')),
  ]);
  // The registry states the integrity of other bytes than it serves: npm must refuse the tarball.
  const tampered = { ...honest, integrity: integrityOf(Buffer.from('not this tarball')) };
  registry = await startLoopbackRegistry([one, two, tampered]);
  process.env.npm_config_registry = registry.url;
  // npm's own cache, fresh, so every fetch in this file goes to the registry and is checked there.
  process.env.npm_config_cache = join(scratch, 'npm-cache');
  // A refused tarball is refused at once, not after npm's retries with their back-off (minutes).
  process.env.npm_config_fetch_retries = '0';
}, 120_000);

afterAll(async () => {
  for (const [key, value] of [
    ['npm_config_registry', saved.registry],
    ['npm_config_cache', saved.cache],
    ['npm_config_fetch_retries', saved.retries],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await registry?.close();
  rmSync(scratch, { recursive: true, force: true });
});

it('fetches a range the host has not installed, runs it, and reads it from the directory after', async () => {
  const modules = await bundlePackages(['codemode-greet@^1'], { registryDir });
  const fetched = JSON.parse(
    readFileSync(join(registryDir, 'codemode-greet@^1', 'node_modules', 'codemode-greet', 'package.json'), 'utf8'),
  );
  expect(fetched.version).toBe('1.4.0');
  expect(registry.requests).toContain('/codemode-greet/-/codemode-greet-1.4.0.tgz');
  const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
  try {
    const result = await executor.execute(
      "async () => { const { greet } = await import('codemode-greet'); return greet('sandbox') }",
      [],
      { modules },
    );
    expect(result).toEqual({ result: 'hello sandbox from 1.4.0', logs: [] });
  } finally {
    await executor.dispose();
  }
  // A fresh module instance with no npm on PATH: the fetched range is read from the directory.
  const path = process.env.PATH;
  const asked = registry.requests.length;
  process.env.PATH = '';
  try {
    vi.resetModules();
    const fresh = (await import('../../src/bundle/index.js')).bundlePackages;
    expect((await fresh(['codemode-greet@^1'], { registryDir }))['codemode-greet']!.js).toBe(
      modules['codemode-greet']!.js,
    );
    expect(registry.requests.length).toBe(asked);
    await expect(fresh(['codemode-greet@^2'], { registryDir })).rejects.toThrow(
      /^Cannot fetch "codemode-greet@\^2" from the npm registry \(bundlePackages option registryDir\): /,
    );
  } finally {
    process.env.PATH = path;
  }
}, 180_000);

it('refuses a tarball whose integrity is not what the registry states, naming the package', async () => {
  const refusal = await bundlePackages(['codemode-tampered@^1'], { registryDir }).catch((error: unknown) => error);
  expect((refusal as Error).message).toMatch(
    /^Cannot fetch "codemode-tampered@\^1" from the npm registry \(bundlePackages option registryDir\): .*(EINTEGRITY|integrity)/s,
  );
}, 180_000);
