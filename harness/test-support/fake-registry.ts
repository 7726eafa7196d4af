/**
 * A loopback npm registry for the release tests (test-only): a real HTTP server on 127.0.0.1 that
 * serves one packument for `@cloudflare/codemode` and, for each version given a directory, that
 * directory packed as npm packs it (`package/...`), with its sha512 integrity.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakeRegistry {
  url: string;
  /** How many packument and tarball requests it answered. */
  requests: string[];
  close(): Promise<void>;
}

export interface FakeRelease {
  /** An installed package directory to pack, or nothing for a version that is listed only. */
  dir?: string;
  published: string;
  /** Serve a tarball whose integrity does not match. */
  corrupt?: boolean;
}

function pack(dir: string): Buffer {
  const work = mkdtempSync(join(tmpdir(), 'fake-registry-'));
  try {
    const tarball = join(work, 'package.tgz');
    execFileSync('tar', ['-czf', tarball, '--transform', 's,^\\.,package,', '-C', dir, '.']);
    return readFileSync(tarball);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function startFakeRegistry(releases: Record<string, FakeRelease>, latest: string): Promise<FakeRegistry> {
  const tarballs = new Map<string, Buffer>();
  for (const [version, release] of Object.entries(releases)) if (release.dir) tarballs.set(version, pack(release.dir));
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(request.url ?? '');
    requests.push(path);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (path === '/@cloudflare/codemode') {
      const versions = Object.fromEntries(
        Object.entries(releases).map(([version, release]) => {
          const bytes = tarballs.get(version);
          const integrity = bytes
            ? `sha512-${createHash('sha512')
                .update(release.corrupt ? Buffer.concat([bytes, Buffer.from('x')]) : bytes)
                .digest('base64')}`
            : undefined;
          return [version, { version, dist: { tarball: `${base}/tarballs/${version}.tgz`, integrity } }];
        }),
      );
      const time = Object.fromEntries(
        Object.entries(releases).map(([version, release]) => [version, release.published]),
      );
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ name: '@cloudflare/codemode', 'dist-tags': { latest }, versions, time }));
      return;
    }
    const tarball = /^\/tarballs\/(.+)\.tgz$/.exec(path);
    const bytes = tarball ? tarballs.get(tarball[1]!) : undefined;
    if (bytes) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(bytes);
      return;
    }
    response.writeHead(404).end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
