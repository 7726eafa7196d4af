/**
 * `npm run case` as a contributor runs it: a real process over a scratch catalogue, on our real
 * executor. One file holds a passing and a failing case so that one sandbox start serves both.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseText, type FixtureCatalogue, fixtureCatalogue } from '../test-support/catalogue-dir.js';

const ROOT = join(import.meta.dirname, '..', '..');

let catalogue: FixtureCatalogue;
beforeAll(() => {
  catalogue = fixtureCatalogue('case-cli-');
});
afterAll(() => catalogue.remove());

function runCli(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'harness', 'cli', 'case.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('npm run case', () => {
  it('answers --help with the usage and exit 0', () => {
    const { status, output } = runCli('--help');
    expect(status).toBe(0);
    expect(output).toMatch(/^usage: npm run case -- <selector>\.\.\. \[--columns <ids>\]/);
    expect(output).toContain('--cases <dir>');
  });

  it('names an unknown option, and an unknown column with the known ones', () => {
    const unknown = runCli('--colums', 'ours');
    expect(unknown.status).toBe(2);
    expect(unknown.output).toMatch(/^unknown option --colums \(did you mean --columns\?\)\n\nusage: npm run case/);
    const column = runCli('x', '--columns', 'ours,0.9.9');
    expect(column.status).toBe(2);
    expect(column.output).toContain(
      '--columns: unknown column(s) 0.9.9; the columns are ours, ours-remote, ours-worker, 0.2.2, 0.3.8, 0.4.1, 0.4.4, latest, or all',
    );
  });

  it('refuses to run without a selector, with the usage, before starting anything', () => {
    catalogue.write('a.yaml', caseText('alone', '1', '{ result: 1 }'));
    const { status, output } = runCli('--columns', 'ours', '--cases', catalogue.dir);
    expect(status).toBe(2);
    expect(output).toMatch(
      /^name the cases to run: a case id, a pattern with \*, or a case file .*\n\nusage: npm run case -- <selector>/,
    );
    expect(output).not.toContain('case(s) on');
  });

  it('refuses an id used in two files, naming both places, before starting anything', () => {
    catalogue.write('a.yaml', caseText('twice', '1', '{ result: 1 }'));
    catalogue.write('b.yaml', `\n${caseText('twice', '1', '{ result: 1 }')}`);
    const { status, output } = runCli('twice', '--cases', catalogue.dir);
    expect(status).toBe(2);
    expect(output).toMatch(/b\.yaml:3 \(case "twice"\): duplicate id, first declared at .*a\.yaml:2/);
  });

  it('refuses a malformed file with its file, line and case id', () => {
    catalogue.write(
      'b.yaml',
      `- id: broken\n  description: d\n  features: [result]\n  code: "1"\n  expect: { logs: 3 }\n`,
    );
    const { status, output } = runCli('broken', '--cases', catalogue.dir);
    expect(status).toBe(2);
    expect(output).toMatch(/b\.yaml:6 \(case "broken"\): \/expect\/logs must be array/);
  });

  it('suggests the ids nearest to a selector that matches nothing', () => {
    catalogue.write('b.yaml', caseText('twice-more', '1', '{ result: 1 }'));
    const { status, output } = runCli('twice-mroe', '--cases', catalogue.dir);
    expect(status).toBe(2);
    expect(output).toContain('no case matches "twice-mroe"; did you mean twice-more?');
  });

  it('runs the cases a pattern selects, prints each outcome and the diff, and exits 1 on a mismatch', () => {
    catalogue.write(
      'a.yaml',
      `${caseText('mixed-right', '20 + 22', '{ result: 42, logs: [] }')}${caseText('mixed-wrong', 'console.warn(1)', '{ logs: ["1"] }')}`,
    );
    catalogue.write('b.yaml', caseText('other', '1', '{ result: 1 }'));
    const { status, output } = runCli('mixed-*', '--cases', catalogue.dir);
    expect(output).toMatch(/a\.yaml › mixed-right[\s\S]*ours {2}✓ pass {2}\{"result":42,"logs":\[\]\}/);
    expect(output).toMatch(/a\.yaml › mixed-wrong[\s\S]*logs\[0\]: expected "1", got "\[warn\] 1"/);
    expect(output).not.toContain('› other');
    expect(output).toContain('2 case(s) on ours: 1 failed');
    expect(status).toBe(1);
  });
});
