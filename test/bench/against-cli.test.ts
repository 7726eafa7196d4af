/**
 * `npm run bench -- --against <dir>` refuses a directory it cannot load before it starts anything,
 * naming the directory and what is missing. Nothing here runs the benchmark itself (speed is not a
 * test): every case ends at the command line's checks.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const RUN = join(import.meta.dirname, '..', '..', 'bench', 'run.ts');
const scratch = mkdtempSync(join(tmpdir(), 'bench-against-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function bench(...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', RUN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr };
}

describe('npm run bench -- --against <dir>', () => {
  it('refuses a directory that does not exist, naming it', () => {
    const missing = join(scratch, 'no-such-tree');
    const { status, stderr } = bench('--against', missing);
    expect(status).toBe(2);
    expect(stderr).toContain(`bench: --against ${missing}: no such directory`);
  });

  it('refuses a tree without a build, naming the directory and the missing file', () => {
    const unbuilt = join(scratch, 'unbuilt');
    mkdirSync(unbuilt);
    const { status, stderr } = bench('--against', unbuilt);
    expect(status).toBe(2);
    expect(stderr).toContain(
      `bench: --against ${unbuilt}: dist/index.js is missing; build that tree first (npm run build in ${unbuilt})`,
    );
  });

  it('refuses a half-built tree, naming the second entry it needs', () => {
    const half = join(scratch, 'half-built');
    mkdirSync(join(half, 'dist'), { recursive: true });
    writeFileSync(join(half, 'dist', 'index.js'), 'export {};\n');
    const { status, stderr } = bench('--against', half);
    expect(status).toBe(2);
    expect(stderr).toContain(`bench: --against ${half}: dist/isolate/index.js is missing`);
  });

  it('refuses --against beside --phase', () => {
    const { status, stderr } = bench('--against', scratch, '--phase', 'runtime');
    expect(status).toBe(2);
    expect(stderr).toContain('bench: --against and --phase do not combine');
  });
});
