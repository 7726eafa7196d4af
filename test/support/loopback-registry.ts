/**
 * An npm registry on loopback, for tests of code that runs npm against a registry: it serves real
 * tarballs (`npm pack` of a directory) under the packument and tarball routes npm asks for, with
 * their real integrity, or a planted wrong one. Tests point npm at it with `npm_config_registry`,
 * so nothing leaves the machine.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PackedVersion {
  name: string;
  version: string;
  tarball: Buffer;
  /** The integrity the packument states; the tarball's own unless a test plants another. */
  integrity: string;
}

/** `npm pack` of a package directory: its tarball, named and versioned as its package.json says. */
export async function packDirectory(directory: string): Promise<PackedVersion> {
  const out = await mkdtemp(join(tmpdir(), 'codemode-pack-'));
  try {
    const { stdout } = await run('npm', ['pack', directory, '--json', '--ignore-scripts', '--pack-destination', out], {
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    const packed = JSON.parse(stdout) as Array<{ name: string; version: string; filename: string }>;
    const { name, version, filename } = packed[0]!;
    const tarball = await readFile(join(out, filename));
    return { name, version, tarball, integrity: integrityOf(tarball) };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

export function integrityOf(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

export interface LoopbackRegistry {
  /** What to set `npm_config_registry` to. */
  url: string;
  /** Every path npm asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startLoopbackRegistry(versions: readonly PackedVersion[]): Promise<LoopbackRegistry> {
  const requests: string[] = [];
  let url = '';
  const byName = new Map<string, PackedVersion[]>();
  for (const version of versions) byName.set(version.name, [...(byName.get(version.name) ?? []), version]);
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://loopback').pathname);
    requests.push(path);
    const tarball = /^\/(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(path);
    if (tarball) {
      const found = byName.get(tarball[1]!)?.find((version) => version.version === tarball[2]);
      if (found) return void response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(found.tarball);
    }
    const packages = byName.get(path.slice(1));
    if (packages === undefined) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    const packument = {
      name: packages[0]!.name,
      'dist-tags': { latest: packages.at(-1)!.version },
      versions: Object.fromEntries(
        packages.map((version) => [
          version.version,
          {
            name: version.name,
            version: version.version,
            dist: {
              tarball: `${url}${version.name}/-/${version.name}-${version.version}.tgz`,
              integrity: version.integrity,
            },
          },
        ]),
      ),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
