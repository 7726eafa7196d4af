/**
 * Packages fetched from the npm registry instead of the host's node_modules (option
 * `registryDir`). npm itself fetches them (no installer of ours): it checks each tarball's
 * integrity against the registry's, and runs no install scripts. Each spec gets a directory of
 * its own under `registryDir`, kept, so a range fetched once is not fetched again.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { locatePackage, type PackageSpec } from './locate.js';
import { formatRegistryFailed } from './texts.js';

const run = promisify(execFile);

/** The directory a spec is fetched into: its name and range, made a safe path. */
function specDir(registryDir: string, spec: PackageSpec): string {
  // Absolute: npm runs in the directory, where a relative --prefix would lead further down.
  // Absolute: npm runs inside the directory, where a relative --prefix would lead further down.
  return join(resolve(registryDir), `${spec.name}@${spec.range ?? 'latest'}`.replace(/[^a-zA-Z0-9@._^~=<>|-]/g, '_'));
}

/** The directory to resolve a spec from, fetched first where it has not been. */
export async function fetchFromRegistry(registryDir: string, spec: PackageSpec): Promise<string> {
  const dir = specDir(registryDir, spec);
  const manifest = join(dir, 'node_modules', spec.name, 'package.json');
  if (existsSync(manifest)) {
    const fetched = locatePackage(spec, dir);
    if (spec.range === undefined || semver.satisfies(fetched.version, spec.range)) return dir;
  }
  mkdirSync(dir, { recursive: true });
  const wanted = `${spec.name}@${spec.range ?? 'latest'}`;
  try {
    await run(
      'npm',
      [
        'install',
        wanted,
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--no-save',
        '--package-lock=false',
        '--prefix',
        dir,
      ],
      { cwd: dir, env: { ...process.env, npm_config_loglevel: 'error' } },
    );
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message?: string };
    throw new Error(formatRegistryFailed(wanted, (stderr || message || '').trim().split('\n').slice(-3).join(' ')));
  }
  return dir;
}
