import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/build-state.js';
import { needsOwnProcess, ownProcessFiles } from './support/process-sharing.js';

const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

describe('which test files get a process of their own', () => {
  it('those that change their process for the next file', () => {
    for (const source of [
      "vi.mock('../../src/codemode/normalize.js', () => ({}));",
      "vi.doMock('node:fs');",
      "vi.stubGlobal('fetch', fake);",
      "vi.stubEnv('TMPDIR', dir);",
      'vi.useFakeTimers();',
      'vi.setSystemTime(0);',
      'vi.resetModules();',
      "process.env.TMPDIR = '/tmp/own';",
      'process.env[key] = value;',
      "process.env.TMPDIR ??= '/tmp/own';",
      "process.env.PATH += ':/opt/bin';",
      'delete process.env.TMPDIR;',
      'Object.assign(process.env, { TMPDIR: dir });',
    ])
      expect(needsOwnProcess(source), source).toBe(true);
  });

  it('not those that only read the environment, spy, or start processes', () => {
    for (const source of [
      'const cache = process.env.MATRIX_RELEASE_CACHE;',
      "if (process.env.CI === 'true') skip();",
      "if (process.env.CI !== 'true') skip();",
      "const spy = vi.spyOn(console, 'warn'); spy.mockRestore();",
      'vi.useRealTimers();',
      "spawn(process.execPath, ['daemon.js'], { env: { ...process.env, TOKEN: 'x' } });",
    ])
      expect(needsOwnProcess(source), source).toBe(false);
  });

  const root = mkdtempSync(join(tmpdir(), 'process-sharing-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('are found by reading every test file under the folders, and only test files', () => {
    mkdirSync(join(root, 'test', 'deep'), { recursive: true });
    mkdirSync(join(root, 'test', 'node_modules'), { recursive: true });
    writeFileSync(join(root, 'test', 'deep', 'mocks.test.ts'), "vi.mock('x');");
    writeFileSync(join(root, 'test', 'plain.test.ts'), 'expect(1).toBe(1);');
    writeFileSync(join(root, 'test', 'support.ts'), "vi.mock('x');");
    writeFileSync(join(root, 'test', 'node_modules', 'dep.test.ts'), "vi.mock('x');");
    expect(ownProcessFiles(root, ['test'])).toEqual(['test/deep/mocks.test.ts']);
  });
});

describe('files that share a process', () => {
  // Shared files may leave spies in place: vitest restores every spy as a file ends, in a shared
  // process too (docs/testing.md relies on it). Two files, each checking that Math.max is no spy and
  // then leaving one on it: whichever runs second fails the day vitest stops restoring them.
  it('do not meet the spies of the file before: vitest restores them as each file ends', () => {
    const dir = mkdtempSync(join(ROOT, 'test', 'sharing-'));
    try {
      const leavesASpy = [
        "import { expect, it, vi } from 'vitest';",
        "it('finds Math.max as it was, and leaves a spy on it', () => {",
        '  expect(vi.isMockFunction(Math.max)).toBe(false);',
        "  vi.spyOn(Math, 'max');",
        '});',
      ].join('\n');
      for (const name of ['first', 'second']) writeFileSync(join(dir, `${name}.test.ts`), leavesASpy);
      const output = runShared(dir, {});
      expect(output.text).toContain('2 passed');
      expect(output.status, output.text).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A rejection nobody handles after a file's last test (a call left to settle in its afterAll) is
  // met by the next file's first test, which fails; the text names the file that ran before.
  it("fail the next file's first test on what the file before left rejecting, and name that file", () => {
    const dir = mkdtempSync(join(ROOT, 'test', 'sharing-'));
    try {
      // The larger file runs first (vitest's order on a fresh run).
      writeFileSync(
        join(dir, 'leaver.test.ts'),
        [
          "import { afterAll, it } from 'vitest';",
          "it('passes', () => {});",
          "afterAll(() => { setTimeout(() => { void Promise.reject(new Error('rejected late')); }, 0); });",
          `// ${'padding so that this file is the larger one '.repeat(10)}`,
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'next.test.ts'),
        "import { it } from 'vitest';\nit('waits a moment', () => new Promise((resolve) => setTimeout(resolve, 100)));\n",
      );
      const output = runShared(dir, { setupFiles: [join(ROOT, 'test', 'setup', 'unhandled-rejections.ts')] });
      expect(output.status, output.text).toBe(1);
      expect(output.text).toContain('1 failed');
      expect(output.text).toMatch(
        /Error: rejected late \(or after the last test of \S*leaver\.test\.ts, which ran before in this process\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Runs vitest on the scratch files of `dir`, one file after another in one shared process. */
function runShared(dir: string, extra: Record<string, unknown>): { status: number | null; text: string } {
  const config = { test: { include: ['*.test.ts'], isolate: false, maxWorkers: 1, fileParallelism: false, ...extra } };
  writeFileSync(join(dir, 'vitest.config.mjs'), `export default ${JSON.stringify(config)};`);
  const run = spawnSync(process.execPath, [VITEST, 'run', '--root', dir], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, text: `${run.stdout}${run.stderr}` };
}
