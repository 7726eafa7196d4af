/**
 * What `npm pack` takes, read from npm itself (`npm pack --dry-run`, without building): the fuzzer's
 * drafts (cases/drafts/, written by `npm run fuzz` into the working tree) are not for consumers, and
 * the catalogue they would ship beside never loads them.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

async function packedPaths(): Promise<string[]> {
  // --ignore-scripts: prepack would build dist/, which this list does not need.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return packed.files.map((file) => file.path);
}

it('ships the case catalogue without the fuzzer drafts', async () => {
  const drafts = join(root, 'cases', 'drafts');
  const hadDrafts = existsSync(drafts);
  // A draft to leave out, so the check holds on a tree whose drafts were all triaged away.
  const probe = join(drafts, 'packed-files-probe.yaml');
  mkdirSync(drafts, { recursive: true });
  writeFileSync(probe, 'id: packed-files-probe\n');
  try {
    const paths = await packedPaths();
    expect(paths).toContain('cases/packages.yaml');
    expect(paths.filter((path) => path.startsWith('cases/drafts/'))).toEqual([]);
  } finally {
    rmSync(hadDrafts ? probe : drafts, { recursive: true, force: true });
  }
}, 60_000);
