/**
 * `npm run matrix` as a process: its help, its refusals, what a limited run writes, and Ctrl-C in
 * the middle of a column, sent to the whole process group as a terminal sends it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BARE_RECORD_DEPRECATION } from '../../src/codemode/texts.js';
import { groupMembers } from '../processes.js';
import { caseText, type FixtureCatalogue, fixtureCatalogue } from '../test-support/catalogue-dir.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const MATRIX = join(ROOT, 'harness', 'cli', 'matrix.ts');

const BARE_RECORD = '  providers:\n    - tools: { add: { add: true } }\n  options: { bareRecord: true }\n';

let catalogue: FixtureCatalogue;
let out: string;
beforeAll(() => {
  catalogue = fixtureCatalogue('matrix-cli-');
  out = mkdtempSync(join(tmpdir(), 'matrix-out-'));
});
afterAll(() => {
  catalogue.remove();
  rmSync(out, { recursive: true, force: true });
});

function runMatrix(...args: string[]) {
  const run = spawnSync(TSX, [MATRIX, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('npm run matrix', () => {
  it('answers --help with the usage, and names a bad option', () => {
    const help = runMatrix('--help');
    expect(help.status).toBe(0);
    expect(help.output).toMatch(/^usage: npm run matrix \[-- options\]/);
    expect(help.output).toContain('--snapshot');
    const bad = runMatrix('--out');
    expect(bad.status).toBe(2);
    expect(bad.output).toMatch(/^--out needs a value\n\nusage: npm run matrix/);
    expect(runMatrix('--snapshot', '--out', out).output).toContain(
      '--snapshot writes the committed snapshot in reports/; it cannot be combined with --out',
    );
  });

  it('writes a limited run where asked, with its banner, and prints no control character into a log', () => {
    const waitsLong = 'async () => { await new Promise((r) => setTimeout(r, 8000)); return 2 }';
    catalogue.write(
      'a.yaml',
      [
        caseText('limited-one', '1', '{ result: 1, logs: [] }'),
        caseText('waits-long', waitsLong, '{ result: 2, logs: [] }'),
        caseText('bare-record', 'async () => await codemode.add(5)', '{ result: 5, logs: [] }', BARE_RECORD),
        caseText('after-the-long-one', '3', '{ result: 3, logs: [] }'),
      ].join(''),
    );
    const { status, output } = runMatrix('--cases', catalogue.dir, '--columns', 'ours', '--out', out);
    expect(output).not.toContain(String.fromCharCode(0x1b)); // no ANSI sequence in a log
    // The cases after the long one ran while it waited, and the count line says what it waits on.
    expect(output).toMatch(/\[ours\] 3\/4 · [\d.]+s · waiting on waits-long\n/);
    // The case asked for the deprecation line; it is not news to the terminal.
    expect(output).not.toContain(BARE_RECORD_DEPRECATION);
    expect(output).toContain('[ours] done in');
    expect(output).toContain('matrix is green');
    expect(status).toBe(0);
    const run = JSON.parse(readFileSync(join(out, 'matrix.json'), 'utf8'));
    expect(run.cells.map((cell: { case: string; status: string }) => `${cell.case} ${cell.status}`)).toEqual([
      'limited-one pass',
      'waits-long pass',
      'bare-record pass',
      'after-the-long-one pass',
    ]);
    expect(run.run.columnsLeftOut).toEqual([
      'ours-remote',
      'ours-worker',
      '0.2.2',
      '0.3.8',
      '0.4.1',
      '0.4.4',
      'latest',
    ]);
    expect(readFileSync(join(out, 'matrix.md'), 'utf8')).toContain(
      '> This run was limited with --columns: ours-remote, ours-worker, 0.2.2',
    );
  });

  it('writes an ordinary run where git ignores it', () => {
    const ignored = (path: string) => spawnSync('git', ['check-ignore', '-q', path], { cwd: ROOT }).status === 0;
    expect(['reports/run/index.html', 'reports/run/history/x.json', 'reports/index.html'].map(ignored)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('stops cleanly on Ctrl-C: one line, no spurious failures, exit 130, nothing left running, no report', async () => {
    const slow = Array.from({ length: 6 }, (_, i) =>
      caseText(
        `slow-${i}`,
        'async () => { await new Promise((r) => setTimeout(r, 3000)); return 1 }',
        '{ result: 1, logs: [] }',
      ),
    ).join('');
    catalogue.write('a.yaml', `${caseText('first-fails', '1', '{ result: 2 }')}${slow}`);
    const interrupted = join(out, 'interrupted');
    const child: ChildProcess = spawn(
      TSX,
      [MATRIX, '--cases', catalogue.dir, '--columns', 'ours', '--out', interrupted],
      {
        cwd: ROOT,
        detached: true, // a process group of its own, as a terminal's foreground job is
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    while (!output.includes('✗') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(output).toContain('[ours] ✗ a.yaml › first-fails');
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    const after = output.slice(output.indexOf('SIGINT: stopping every column that is still running…'));
    expect(output.match(/SIGINT: stopping/g)).toHaveLength(1);
    expect(after).not.toMatch(/✗|⚠/);
    expect(existsSync(join(interrupted, 'matrix.json'))).toBe(false);
    expect(groupMembers(child.pid!)).toEqual([]);
  });
});
