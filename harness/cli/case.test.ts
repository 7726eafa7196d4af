/**
 * `npm run case` end to end, as a contributor runs it: a real process, a fixture file, our real
 * executor. One file holds a passing and a failing case so that one sandbox start serves both.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_COMMENT } from './load-cases.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fixture(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `${SCHEMA_COMMENT}\n${body}`);
  return file;
}

function runCli(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(TSX, [join(ROOT, 'harness', 'cli', 'case.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('npm run case', () => {
  it('refuses a malformed file with its file, line and case id, before starting anything', () => {
    const file = fixture(
      'bad.yaml',
      '- id: broken\n  description: d\n  features: [result]\n  code: "1"\n  expect: { logs: 3 }\n',
    );
    const { status, output } = runCli(file);
    expect(status).toBe(2);
    expect(output).toMatch(/bad\.yaml:6 \(case "broken"\): \/expect\/logs must be array/);
  });

  it('names the ids of a file when asked for one it does not hold', () => {
    const file = fixture(
      'one.yaml',
      '- id: only\n  description: d\n  features: [result]\n  code: "1"\n  expect: { result: 1 }\n',
    );
    const { status, output } = runCli(file, 'other');
    expect(status).toBe(2);
    expect(output).toMatch(/has no case "other"; its ids: only/);
  });

  it('runs every case of a file on ours, prints outcomes and the diff, and exits 1 on a mismatch', () => {
    const file = fixture(
      'mixed.yaml',
      [
        '- id: right',
        '  description: An expectation that holds.',
        '  features: [normalize]',
        '  code: "20 + 22"',
        '  expect: { result: 42, logs: [] }',
        '- id: wrong',
        '  description: An expectation that does not hold.',
        '  features: [console]',
        '  code: "console.warn(1)"',
        '  expect: { logs: ["1"] }',
        '',
      ].join('\n'),
    );
    const { status, output } = runCli(file);
    expect(output).toMatch(/mixed\.yaml › right[\s\S]*ours: \{"result":42,"logs":\[\]\}\n\s+ours: pass/);
    expect(output).toMatch(/mixed\.yaml › wrong[\s\S]*logs\[0\]: expected "1", got "\[warn\] 1"/);
    expect(output).toMatch(/2 case\(s\) on ours: 1 mismatch\(es\)/);
    expect(status).toBe(1);
  });
});
