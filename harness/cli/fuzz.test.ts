/**
 * `npm run fuzz` as a contributor runs it: its usage, and a bad option refused with exit 2 before
 * anything starts, naming the option and what it takes. (A run itself is covered by
 * harness/fuzz/planted.test.ts, which drives the same runner.)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nightSeed } from '../fuzz/generator.js';

const ROOT = join(import.meta.dirname, '..', '..');

function runCli(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'harness', 'cli', 'fuzz.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('npm run fuzz', () => {
  it('answers --help with the usage and exit 0', () => {
    const { status, output } = runCli('--help');
    expect(status).toBe(0);
    expect(output).toMatch(/^usage: npm run fuzz -- \[--seed <n>\] \[--count <n>\] \[--column <id>\]/);
    expect(output).toContain('--budget-seconds <s>');
  });

  it('refuses a bad option with exit 2, naming it and what it takes', () => {
    const column = runCli('--column', 'ours');
    expect(column.status).toBe(2);
    expect(column.output).toMatch(
      /^--column ours is not a column ours can be compared with; the columns are: 0\.2\.2, /,
    );
    const count = runCli('--count', '0');
    expect(count.status).toBe(2);
    expect(count.output).toMatch(/^--count must be a whole number of at least 1, got "0"/);
    const seed = runCli('--seed', 'x');
    expect(seed.status).toBe(2);
    expect(seed.output).toMatch(/^--seed must be an integer, got "x"/);
    const unknown = runCli('--sead', '1');
    expect(unknown.status).toBe(2);
    expect(unknown.output).toMatch(/^unknown option --sead \(did you mean --seed\?\)\n\nusage: npm run fuzz/);
  });

  it('takes the night’s seed from the UTC date', () => {
    expect(nightSeed(new Date('2026-12-05T03:17:00Z'))).toBe(20261205);
  });
});
