/**
 * The commands a contributor meets first, as the README's Develop section and CONTRIBUTING.md name
 * them: each npm script that does work answers `--help` at once with its own usage (before a
 * build, a busy loop, a rewrite of the docs or a full lint), and the pages name every script and
 * every column of the matrix.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_COLUMNS } from '../harness/columns.js';
import { section } from './package/markdown.js';

const ROOT = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

function npmRun(script: string, ...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('npm', ['run', script, '--', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** What each script prints when it has started its work instead of answering --help. */
const STARTED_WORK = [
  /patch-package|tsc -p|> .* build/, // a build
  /busy loop\(s\) beside the suite|vitest\/\d/, // test:loaded's burners, or vitest's own help
  /^docs\/[\w-]+\.md: #/m, // docs:options rewriting a page
  /Checked \d+ files?|biome check|> knip|depcruise/, // a lint step
];

describe('--help', () => {
  it.each([
    ['bench', /^Usage: npm run bench /],
    ['test:loaded', /^usage: npm run test:loaded /],
    ['docs:options', /^usage: npm run docs:options\n/],
    ['lint', /^usage: npm run lint\n/],
  ])('npm run %s -- --help prints its own usage at once, and starts nothing', (script, usage) => {
    const pages = ['docs/isolate.md', 'docs/remote.md', 'docs/durable-state.md'];
    const written = pages.map((page) => statSync(join(ROOT, page)).mtimeMs);
    const { status, output } = npmRun(script, '--help');
    // npm's own banner (`> name@version script`) comes first; the usage is the script's first line.
    const printed = output.replace(/^\n?> [^\n]*\n> [^\n]*\n\n/, '');
    expect(status).toBe(0);
    expect(printed).toMatch(usage);
    for (const work of STARTED_WORK) expect(printed).not.toMatch(work);
    expect(pages.map((page) => statSync(join(ROOT, page)).mtimeMs)).toEqual(written);
  });

  it('npm run lint and docs:options refuse an argument they do not take, with the usage', () => {
    for (const script of ['lint', 'docs:options']) {
      const { status, output } = npmRun(script, '--fix');
      expect(status, script).toBe(2);
      expect(output).toContain(`unexpected argument --fix\n\nusage: npm run ${script}`);
    }
  });
});

describe("the README's Develop section", () => {
  const develop = section(read('README.md'), 'Develop');

  it("names every npm script but npm pack's hook and the bench, which has a section of its own", () => {
    const named = Object.keys(scripts).filter((script) => script !== 'prepack' && script !== 'bench');
    const missing = named.filter((script) => !develop.includes(script === 'test' ? 'npm test' : `npm run ${script}`));
    expect(missing).toEqual([]);
    expect(section(read('README.md'), 'Benchmarks')).toContain('npm run bench');
  });

  it('names every column npm run matrix runs', () => {
    const matrix = develop.slice(develop.indexOf('`npm run matrix` runs'));
    expect(DEFAULT_COLUMNS.filter((column) => !matrix.includes(`\`${column}\``))).toEqual([]);
  });

  it('points at CONTRIBUTING.md, which says how to set up, test, write a case, and the standards', () => {
    expect(develop).toContain('[CONTRIBUTING.md](CONTRIBUTING.md)');
    const contributing = read('CONTRIBUTING.md');
    for (const heading of ['Setting up', 'Running the tests', 'Writing a case', 'The standards'])
      expect(contributing).toContain(`## ${heading}`);
  });
});
