/**
 * The library's workerd is pinned to the one the harness's wrangler runs, so our side and the
 * reference columns run the same runtime (issue 3). This fails when the two drift apart.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';

const require = createRequire(import.meta.url);

function manifest(path: string): { version?: string; dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(path, 'utf8')) as { version?: string; dependencies?: Record<string, string> };
}

const ours = manifest(new URL('../../../../package.json', import.meta.url).pathname);
const wrangler = manifest(require.resolve('wrangler/package.json'));

it('pins workerd exactly, to the version wrangler depends on', () => {
  const pinned = ours.dependencies?.workerd;
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  expect(wrangler.dependencies?.workerd).toBe(pinned);
});

it('installs that version, for us and for the miniflare wrangler runs', () => {
  const pinned = ours.dependencies?.workerd;
  expect(manifest(require.resolve('workerd/package.json')).version).toBe(pinned);
  const fromWrangler = createRequire(require.resolve('wrangler/package.json'));
  const miniflare = manifest(fromWrangler.resolve('miniflare/package.json'));
  expect(miniflare.dependencies?.workerd).toBe(pinned);
  const wranglerWorkerd = createRequire(fromWrangler.resolve('miniflare/package.json')).resolve('workerd/package.json');
  expect(manifest(wranglerWorkerd).version).toBe(pinned);
});
