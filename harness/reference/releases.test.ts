/**
 * The newest release, resolved at run time: which version the registry's answer makes the newest,
 * how it is installed outside the lockfile, and what happens when the registry is not there. The
 * registry is a real HTTP server on loopback serving the releases npm installed for the pinned
 * columns, packed as npm packs them; the unreachable one is a loopback port nothing listens on.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRegistry, startFakeRegistry } from '../test-support/fake-registry.js';

const ROOT = join(import.meta.dirname, '..', '..');
// A cache of its own, so the test never clears the one a matrix run may be using.
process.env.MATRIX_RELEASE_CACHE = join(ROOT, 'node_modules', '.cache', 'codemode-releases-test');
const { compareVersions, inRange, newestVersion, RELEASE_CACHE, resolveRelease } = await import('./releases.js');

const LATEST_DIR = join(ROOT, 'node_modules', '@cloudflare', 'codemode');
const OLDER_DIR = join(ROOT, 'node_modules', 'codemode-0-4');
const lockfile = () =>
  createHash('sha256')
    .update(readFileSync(join(ROOT, 'package-lock.json')))
    .digest('hex');

let registry: FakeRegistry;
const lockBefore = lockfile();

beforeAll(async () => {
  rmSync(RELEASE_CACHE, { recursive: true, force: true });
  registry = await startFakeRegistry(
    {
      // Publish times out of semver order, as npm's are for 0.5.0 and 0.5.1: the order is semver's.
      '0.4.4': { dir: OLDER_DIR, published: '2026-09-30T00:00:00+00:00' },
      '0.5.6': { dir: LATEST_DIR, published: '2026-10-29T18:54:41+00:00' },
      '0.5.10': { dir: LATEST_DIR, published: '2026-11-02T08:00:00.5+00:00' },
      '0.5.9': { published: '2026-11-20T08:00:00+00:00' },
      '0.6.0-beta.1': { published: '2026-11-25T08:00:00+00:00' },
      '0.6.0': { dir: LATEST_DIR, published: '2026-11-30T08:00:00+00:00', corrupt: false },
      '0.4.9': { dir: OLDER_DIR, published: '2026-12-01T08:00:00+00:00', corrupt: true },
    },
    '0.5.6',
  );
});
afterAll(async () => {
  await registry.close();
  rmSync(RELEASE_CACHE, { recursive: true, force: true });
});

describe('the newest release', () => {
  it('is the greatest by semver of dist-tag latest and every stable version newer than the lock', () => {
    const packument = {
      'dist-tags': { latest: '0.5.6' },
      versions: { '0.5.1': {}, '0.5.6': {}, '0.5.10': {}, '0.5.9': {}, '0.6.0-beta.1': {} },
    };
    expect(newestVersion(packument, '0.5.6')).toBe('0.5.10');
    expect(newestVersion({ 'dist-tags': { latest: '0.5.6' }, versions: { '0.5.6': {} } }, '0.5.6')).toBe('0.5.6');
    // A lock newer than the tag (the tag moved back) still sees the tag.
    expect(newestVersion({ 'dist-tags': { latest: '0.5.5' }, versions: { '0.5.5': {} } }, '0.5.6')).toBe('0.5.5');
    expect(() => newestVersion({ versions: {} }, '0.5.6')).toThrow(/no stable release/);
    expect(['0.5.10', '0.5.9', '0.10.0', '0.9.1'].sort(compareVersions)).toEqual([
      '0.5.9',
      '0.5.10',
      '0.9.1',
      '0.10.0',
    ]);
    expect([
      inRange('0.5.6', '>=0.2.2 <0.6.0'),
      inRange('0.6.0', '>=0.2.2 <0.6.0'),
      inRange('0.2.1', '>=0.2.2 <0.6.0'),
    ]).toEqual([true, false, false]);
  });

  it('is asked of the registry and installed into the cache, with its publish date, and the lockfile unchanged', async () => {
    // 0.6.0 is the newest stable version the registry lists; 0.6.0-beta.1 is not a release.
    const release = await resolveRelease({ registry: registry.url, lockVersion: '0.5.6' });
    expect(release).toMatchObject({
      version: '0.6.0',
      published: '2026-11-30T08:00:00.000Z',
      inPeerRange: false,
      peerRange: '>=0.2.2 <0.6.0',
      chosenBy: 'registry',
    });
    expect(release.dir.startsWith(RELEASE_CACHE)).toBe(true);
    const installed = JSON.parse(readFileSync(join(release.dir, 'package.json'), 'utf8'));
    expect(installed.name).toBe('@cloudflare/codemode');
    expect(existsSync(join(release.dir, 'dist', 'index.js'))).toBe(true);
    expect(lockfile()).toBe(lockBefore);
  });

  it('is the version --newest names, inside the peer range, installed once', async () => {
    const first = await resolveRelease({ registry: registry.url, lockVersion: '0.5.6', pinned: '0.4.4' });
    expect(first).toMatchObject({ version: '0.4.4', inPeerRange: true, chosenBy: 'option' });
    expect(JSON.parse(readFileSync(join(first.dir, 'package.json'), 'utf8')).version).toBe('0.4.4');
    const tarballsBefore = registry.requests.filter((path) => path.startsWith('/tarballs/')).length;
    await resolveRelease({ registry: registry.url, lockVersion: '0.5.6', pinned: '0.4.4' });
    expect(registry.requests.filter((path) => path.startsWith('/tarballs/')).length).toBe(tarballsBefore);
  });

  it('refuses a version that is not published, not a version, or whose tarball does not match its integrity', async () => {
    await expect(resolveRelease({ registry: registry.url, lockVersion: '0.5.6', pinned: '0.5.3' })).rejects.toThrow(
      /@cloudflare\/codemode 0\.5\.3 is not published; the registry has/,
    );
    await expect(resolveRelease({ registry: registry.url, lockVersion: '0.5.6', pinned: 'next' })).rejects.toThrow(
      '"next" is not a release version; give one like 0.5.6',
    );
    await expect(resolveRelease({ registry: registry.url, lockVersion: '0.5.6', pinned: '0.4.9' })).rejects.toThrow(
      /does not match the registry's integrity/,
    );
    expect(existsSync(join(RELEASE_CACHE, '0.4.9', 'node_modules', '@cloudflare', 'codemode'))).toBe(false);
  });

  it('is not resolved without a registry: the error says which registry did not answer', async () => {
    // A loopback port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    await expect(resolveRelease({ registry: `http://127.0.0.1:${port}`, lockVersion: '0.5.6' })).rejects.toThrow(
      new RegExp(
        `the npm registry did not answer \\(http://127\\.0\\.0\\.1:${port}/@cloudflare%2fcodemode: .*ECONNREFUSED`,
      ),
    );
  });
});
