/**
 * A host out of file descriptors: the state's refusal says so (EMFILE), with the process's limit
 * and what raises it, never that a healthy database is broken. The host runs under a low
 * `prlimit --nofile` and takes every descriptor left itself (fixtures/descriptors.ts), so where
 * the open runs out is fixed by how many it gives back.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Node raises its soft limit to the hard one as it starts: the hard limit is what the host has. */
const LIMIT = 256;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-descriptors-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function runOutOfDescriptors(command: 'open' | 'facet', path: string, free: number) {
  const { stdout } = await promisify(execFile)(
    'prlimit',
    [
      `--nofile=${LIMIT}:${LIMIT}`,
      process.execPath,
      '--import',
      'tsx',
      '--import',
      './src/register/index.ts',
      'test/durable/fixtures/descriptors.ts',
      command,
      path,
      String(free),
    ],
    { cwd: ROOT },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as { code?: string; error?: string; ok?: true };
}

const OUT_OF_DESCRIPTORS = (file: string) =>
  `Durable state: ${file} could not be opened: this process has no file descriptor left (EMFILE: this process may hold ${LIMIT} open files (its soft limit; the hard limit is ${LIMIT}), and all are in use). Nothing in the state is damaged; this open only was refused. Raise the limit where the host starts (\`ulimit -n\` in its shell, LimitNOFILE= in its systemd unit), or let it hold fewer files, then open it again.`;

describe('a host out of file descriptors', () => {
  // 0: the directory cannot be opened; 1: the lock helper cannot be started.
  it.each([0, 1])(
    'is refused at open with EMFILE and the limit (%i descriptors free), and leaves no state behind',
    async (free) => {
      const path = join(dir, 'state');
      expect(await runOutOfDescriptors('open', path, free)).toEqual({
        code: 'STATE_OUT_OF_DESCRIPTORS',
        error: OUT_OF_DESCRIPTORS(path),
      });
      expect(await readdir(dir)).toEqual([]);
    },
  );

  // 0: the new database cannot be opened; 1: it is, and its journal cannot be.
  it.each([
    [0, 'state.sqlite'],
    [1, 'state.sqlite-journal'],
  ])(
    'is refused a new facet with EMFILE and the limit (%i descriptors free), naming %s, not a broken database',
    async (free, file) => {
      const path = join(dir, 'state');
      expect(await runOutOfDescriptors('facet', path, free)).toEqual({
        code: 'STATE_OUT_OF_DESCRIPTORS',
        error: OUT_OF_DESCRIPTORS(join(path, 'facets', 'fresh', file)),
      });
    },
  );
});
