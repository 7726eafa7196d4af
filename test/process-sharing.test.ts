import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needsOwnProcess, ownProcessFiles } from './support/process-sharing.js';

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
      'delete process.env.TMPDIR;',
    ])
      expect(needsOwnProcess(source), source).toBe(true);
  });

  it('not those that only read the environment, spy, or start processes', () => {
    for (const source of [
      'const cache = process.env.MATRIX_RELEASE_CACHE;',
      "if (process.env.CI === 'true') skip();",
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
