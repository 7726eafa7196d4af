/**
 * `npm run matrix` as a process: its help, its refusals, what a limited run writes, and Ctrl-C in
 * the middle of a column, sent to the whole process group as a terminal sends it.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { BARE_RECORD_DEPRECATION } from '../../src/codemode/texts.js';
import { withSlack } from '../../test/support/machine-slack.js';
import { groupMembers } from '../processes.js';
import { caseText, type FixtureCatalogue, fixtureCatalogue } from '../test-support/catalogue-dir.js';
import { type FakeRegistry, startFakeRegistry } from '../test-support/fake-registry.js';

const ROOT = join(import.meta.dirname, '..', '..');
/**
 * The CLI runs in one process, as `npm run matrix` runs it: `tsx`'s own launcher would put a parent
 * in front that, on a loaded machine, SIGKILLs a child slower than 30 ms to acknowledge a Ctrl-C.
 */
const NODE_TSX = ['--import', 'tsx'];
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
  rmSync(RELEASE_CACHE, { recursive: true, force: true });
});

/** Resolved releases go to a cache of this test's own, under node_modules so they find their dependencies. */
const RELEASE_CACHE = join(ROOT, 'node_modules', '.cache', 'codemode-releases-matrix-test');

function runMatrix(...args: string[]) {
  const run = spawnSync(process.execPath, [...NODE_TSX, MATRIX, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/**
 * As runMatrix, without blocking this process: the loopback registry it asks lives here. Runs at the
 * same time need release caches of their own (`cache`): each unpacks the releases it resolves.
 */
function runMatrixAsync(...args: string[]): Promise<{ status: number | null; output: string }> {
  return runMatrixAsyncIn(RELEASE_CACHE, ...args);
}

function runMatrixAsyncIn(cache: string, ...args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...NODE_TSX, MATRIX, ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 600_000, env: { ...process.env, MATRIX_RELEASE_CACHE: cache } },
      (_error, stdout, stderr) => resolve({ status: child.exitCode, output: `${stdout}${stderr}` }),
    );
  });
}

/** One case of the real catalogue, as its file writes it. */
function realCase(file: string, id: string): string {
  const text = readFileSync(join(ROOT, 'cases', file), 'utf8');
  const start = text.indexOf(`- id: ${id}\n`);
  const end = text.indexOf('\n- id: ', start + 1);
  return `${text.slice(start, end === -1 ? undefined : end)}\n`;
}

/** Items of the real catalogue, as a file of their own: anchors resolved, so each stands alone. */
function realItems(file: string, ids: readonly string[]): string {
  const items = parseYaml(readFileSync(join(ROOT, 'cases', file), 'utf8')) as Array<{ id: string }>;
  return stringifyYaml(ids.map((id) => items.find((item) => item.id === id)));
}

/** A loopback port nothing listens on. */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe('npm run matrix', () => {
  it('answers --help with the usage, and names a bad option', async () => {
    // Four processes that each load the command and stop: side by side, not one after another.
    const [help, bad, typo, snapshot] = await Promise.all([
      runMatrixAsync('--help'),
      runMatrixAsync('--out'),
      runMatrixAsync('--colums', 'ours'),
      runMatrixAsync('--snapshot', '--out', out),
    ]);
    expect(help.status).toBe(0);
    expect(help.output).toMatch(/^usage: npm run matrix \[-- options\]/);
    expect(help.output).toContain('--snapshot');
    expect(bad.status).toBe(2);
    expect(bad.output).toMatch(/^--out needs a value\n\nusage: npm run matrix/);
    expect(typo.status).toBe(2);
    expect(typo.output).toMatch(/^unknown option --colums \(did you mean --columns\?\)\n\nusage: npm run matrix/);
    expect(snapshot.output).toContain(
      '--snapshot writes the committed snapshot in reports/; it cannot be combined with --out',
    );
  });

  it('writes a limited run where asked, with its banner, and prints no control character into a log', () => {
    // Long enough that the three quick cases finish while it waits, on a loaded host too.
    const waitsLong = `async () => { await new Promise((r) => setTimeout(r, ${Math.min(withSlack(8000), 40_000)})); return 2 }`;
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
    expect(status, output).toBe(0);
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
      'ours-workerd-newest',
      '0.2.2',
      '0.3.8',
      '0.4.1',
      '0.4.4',
      'latest',
      'newest',
    ]);
    expect(readFileSync(join(out, 'matrix.md'), 'utf8')).toContain(
      '> This run was limited with --columns: ours-remote, ours-worker, ours-workerd-newest, 0.2.2',
    );
  });

  it('prints --help through npm run matrix without building first', () => {
    const run = spawnSync('npm', ['run', 'matrix', '--', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/usage: npm run matrix \[-- options\]/);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/patch-package|tsc -p|> .* build/);
  });

  it('does not run the newest columns when the registry does not answer, and says why', {
    timeout: 300_000,
  }, async () => {
    catalogue.write('a.yaml', caseText('offline-one', '1', '{ result: 1, logs: [] }'));
    const offline = join(out, 'offline');
    const registry = `http://127.0.0.1:${await deadPort()}`;
    const { status, output } = await runMatrixAsync(
      ...[
        '--cases',
        catalogue.dir,
        '--columns',
        'ours,newest,ours-workerd-newest',
        '--registry',
        registry,
        '--out',
        offline,
      ],
    );
    expect(status, output).toBe(1);
    expect(output).toContain(`the npm registry did not answer (${registry}/@cloudflare%2fcodemode:`);
    const run = JSON.parse(readFileSync(join(offline, 'matrix.json'), 'utf8'));
    const newest = run.columns.find((column: { id: string }) => column.id === 'newest');
    expect(newest.infraError).toMatch(/^the npm registry did not answer/);
    // Its cells say the same reason, not what starting an unresolved column would break on.
    expect(run.cells.find((cell: { column: string }) => cell.column === 'newest').reason).toMatch(
      /the npm registry did not answer/,
    );
    expect(newest.versions.codemode).toBeNull(); // no silent fallback to the lock's release
    expect(run.summary.green).toBe(false);
    expect(run.releaseDiff).toBeUndefined();
    expect(readFileSync(join(offline, 'matrix.md'), 'utf8')).toContain(
      '> column **newest** did not run: the npm registry did not answer',
    );
    // The newest workerd too: ours on it does not run, and nothing falls back to the pinned workerd.
    const workerd = run.columns.find((column: { id: string }) => column.id === 'ours-workerd-newest');
    expect(workerd.infraError).toMatch(/^the npm registry did not answer \(.*workerd-/);
    expect(workerd.versions.workerd).toBeNull();
    expect(run.workerdDiff).toBeUndefined();
  });

  describe('with two real releases from a loopback registry', () => {
    let registry: FakeRegistry;
    /**
     * The three runs against the registry, started together once it listens: each waits mostly on
     * its wrangler dev columns starting, so side by side they take little more than one. Each has
     * its own catalogue, output and release cache.
     */
    let diffs: {
      catalogues: FixtureCatalogue[];
      caches: string[];
      fromOld: Promise<{ status: number | null; output: string }>;
      fromFlows: Promise<{ status: number | null; output: string }>;
      sameRelease: Promise<{ status: number | null; output: string }>;
    };
    const FLOWS = ['runtime-transform-truncate-structural', 'runtime-model-output-leaves-out-calls'];
    afterAll(async () => {
      if (diffs) {
        await Promise.all([diffs.fromOld, diffs.fromFlows, diffs.sameRelease]);
        for (const scratch of diffs.catalogues) scratch.remove();
        for (const cache of diffs.caches) rmSync(cache, { recursive: true, force: true });
      }
      await registry?.close();
    });
    beforeAll(async () => {
      // The releases npm installed for the pinned columns, packed and served as the registry serves them.
      registry = await startFakeRegistry(
        {
          '0.3.8': { dir: join(ROOT, 'node_modules', 'codemode-0-3'), published: '2026-05-01T00:00:00+00:00' },
          '0.5.1': { dir: join(ROOT, 'node_modules', 'codemode-0-5-1'), published: '2026-08-07T11:13:25.696000+00:00' },
          '0.5.6': {
            dir: join(ROOT, 'node_modules', '@cloudflare', 'codemode'),
            published: '2026-10-29T18:54:41+00:00',
          },
        },
        '0.5.6',
      );
      const [old, flows, same] = ['old', 'flows', 'same'].map((name) => fixtureCatalogue(`matrix-cli-${name}-`)) as [
        FixtureCatalogue,
        FixtureCatalogue,
        FixtureCatalogue,
      ];
      old.write(
        'validation.yaml',
        `${realCase('validation.yaml', 'validation-reserved-promise')}${caseText('same-everywhere', '1', '{ result: 1, logs: [] }')}`,
      );
      flows.write(
        'runtime-lifecycle.yaml',
        `${realItems('runtime-lifecycle.yaml', FLOWS)}${caseText('same-everywhere', '1', '{ result: 1, logs: [] }')}`,
      );
      same.write('validation.yaml', caseText('same-release', '1', '{ result: 1, logs: [] }'));
      const caches = [`${RELEASE_CACHE}-old`, `${RELEASE_CACHE}-flows`, `${RELEASE_CACHE}-same`];
      diffs = {
        catalogues: [old, flows, same],
        caches,
        fromOld: runMatrixAsyncIn(
          caches[0]!,
          ...['--cases', old.dir, '--columns', 'compare,newest', '--compare', '0.3.8'],
          ...['--registry', registry.url, '--fail-on-upstream-change', '--out', join(out, 'diffed')],
        ),
        fromFlows: runMatrixAsyncIn(
          caches[1]!,
          ...['--cases', flows.dir, '--columns', 'compare,newest', '--compare', '0.5.1', '--newest', '0.5.6'],
          ...['--registry', registry.url, '--out', join(out, 'diffed-0.5.1')],
        ),
        sameRelease: runMatrixAsyncIn(
          caches[2]!,
          ...[
            '--cases',
            same.dir,
            '--columns',
            'latest,newest',
            '--registry',
            registry.url,
            '--out',
            join(out, 'reused'),
          ],
        ),
      };
    });

    it('opens the report with the release diff between newest and --compare, and exits 3 with --fail-on-upstream-change', {
      timeout: 600_000,
    }, async () => {
      const diffed = join(out, 'diffed');
      const { status, output } = await diffs.fromOld;
      expect(output).toContain('[newest] @cloudflare/codemode 0.5.6, published 2026-10-29');
      expect(status, output).toBe(3);
      const run = JSON.parse(readFileSync(join(diffed, 'matrix.json'), 'utf8'));
      expect(run.releaseDiff.from).toEqual({ column: 'compare', release: '0.3.8' });
      expect(run.releaseDiff.to).toEqual({ column: 'newest', release: '0.5.6' });
      // Only the case whose behaviour the two releases differ on; the reserved name is new in 0.4.0.
      expect(run.releaseDiff.rows.map((row: { case: string; kind: string }) => [row.case, row.kind])).toEqual([
        ['validation-reserved-promise', 'newly-passing'],
      ]);
      const [row] = run.releaseDiff.rows;
      expect([row.from.status, row.to.status]).toEqual(['skip', 'pass']);
      expect(row.to.outcome).toContain('Provider name \\"Promise\\" is reserved');
      expect(row.from.outcome).not.toEqual(row.to.outcome);
      const newest = run.columns.find((column: { id: string }) => column.id === 'newest');
      expect(newest.release).toEqual({
        published: '2026-10-29T18:54:41.000Z',
        peerRange: '>=0.2.2 <0.6.0',
        inPeerRange: true,
        chosenBy: 'registry',
      });
      const markdown = readFileSync(join(diffed, 'matrix.md'), 'utf8');
      // The diff comes before everything else the report says.
      expect(markdown.indexOf('## Release diff: 0.3.8 → 0.5.6')).toBeLessThan(
        markdown.indexOf('## Since the previous run'),
      );
      expect(markdown).toContain('### Newly passing (1)');
      expect(markdown).toContain('(index.html#cell=validation-reserved-promise/compare)');
      expect(markdown).toContain('(index.html#cell=validation-reserved-promise/newest)');
    });

    it('lists the runtime flows 0.5.2 changed in the release diff from 0.5.1 to 0.5.6, each with both outcomes', {
      timeout: 600_000,
    }, async () => {
      const flows = FLOWS;
      const diffed = join(out, 'diffed-0.5.1');
      const { status, output } = await diffs.fromFlows;
      // Green: each release meets what the catalogue says of it, the older one through its skip entries.
      expect(status).toBe(0);
      expect(output).toContain('[compare] @cloudflare/codemode 0.5.1');
      const run = JSON.parse(readFileSync(join(diffed, 'matrix.json'), 'utf8'));
      expect(run.releaseDiff.from).toEqual({ column: 'compare', release: '0.5.1' });
      expect(run.releaseDiff.to).toEqual({ column: 'newest', release: '0.5.6' });
      const rows: Array<{
        case: string;
        from: { status: string; outcome: string };
        to: { status: string; outcome: string };
      }> = run.releaseDiff.rows;
      expect(rows.map((row) => [row.case, row.from.status, row.to.status])).toEqual(
        flows.map((id) => [id, 'skip', 'pass']),
      );
      const [truncated, projected] = rows as [(typeof rows)[0], (typeof rows)[0]];
      // Before 0.5.2 the result is the JSON text, cut; from it, the structure with a marker.
      expect(truncated.from.outcome).toContain('"result":"{\\n  \\"total\\": 3,');
      expect(truncated.to.outcome).toContain('"--- TRUNCATED --- 2 more items"');
      expect(projected.from.outcome).toContain('has no toModelOutput');
      expect(projected.to.outcome).toContain('"type":"json"');
      expect(projected.to.outcome).not.toContain('"calls"');
      const cells = run.cells.filter((cell: { column: string }) => cell.column === 'compare');
      expect(cells.map((cell: { case: string; expectation?: string }) => [cell.case, cell.expectation])).toEqual([
        [flows[0], 'skip'],
        [flows[1], 'skip'],
        ['same-everywhere', undefined],
      ]);
      const markdown = readFileSync(join(diffed, 'matrix.md'), 'utf8');
      expect(markdown).toContain('## Release diff: 0.5.1 → 0.5.6');
      expect(markdown).toContain(`(index.html#cell=${flows[0]}/compare)`);
    });

    it("reuses latest's results when the newest release is the lock's, and says so in the head", {
      timeout: 600_000,
    }, async () => {
      const reused = join(out, 'reused');
      const { status, output } = await diffs.sameRelease;
      expect(status, output).toBe(0);
      expect(output).not.toContain('[newest] opening the column');
      const run = JSON.parse(readFileSync(join(reused, 'matrix.json'), 'utf8'));
      const newest = run.columns.find((column: { id: string }) => column.id === 'newest');
      expect(newest.sameAs).toBe('latest');
      expect(run.cells).toEqual([
        { case: 'same-release', column: 'latest', status: 'pass' },
        { case: 'same-release', column: 'newest', status: 'pass' },
      ]);
      expect(run.releaseDiff).toBeUndefined();
      expect(readFileSync(join(reused, 'matrix.md'), 'utf8')).toContain(
        'same release as latest: its results, not run twice',
      );
    });
  });

  it('prints a failure with its short diff, as the report records it', () => {
    rmSync(join(catalogue.dir, 'validation.yaml'), { force: true });
    catalogue.write(
      'a.yaml',
      caseText('fails-here', 'async () => ({ a: 1, b: [1, 2] })', '{ result: { a: 2, b: [1, 2] }, logs: [] }'),
    );
    const failing = join(out, 'failing');
    const { status, output } = runMatrix('--cases', catalogue.dir, '--columns', 'ours', '--out', failing);
    expect(status, output).toBe(1);
    const run = JSON.parse(readFileSync(join(failing, 'matrix.json'), 'utf8'));
    const diff: string = run.cells[0].diff;
    expect(diff.length).toBeGreaterThan(0);
    const printed = output.slice(output.indexOf('[ours] ✗ a.yaml › fails-here'));
    for (const line of diff.split('\n').slice(0, 8)) expect(printed).toContain(`\n    ${line}`);
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
      process.execPath,
      [...NODE_TSX, MATRIX, '--cases', catalogue.dir, '--columns', 'ours', '--out', interrupted],
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
