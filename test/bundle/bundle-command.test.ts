/**
 * `codemode-executor bundle` (src/server/command/bundle-command.ts): the map it writes runs in the sandbox,
 * and its flags are refused in the daemon's words.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bundlePackages } from '../../src/bundle/index.js';
import { CodemodeExecutor } from '../../src/index.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { parseBundleCommand } from '../../src/server/command/bundle-command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'codemode-bundle-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function refusal(...argv: string[]): string {
  try {
    parseBundleCommand(argv);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('codemode-executor bundle', () => {
  it('writes the map bundlePackages returns, which runs in the sandbox', async () => {
    const out = join(scratch, 'modules.json');
    const { stderr } = await run('node', ['--import', 'tsx', 'src/server/cli.ts', 'bundle', 'uuid', '--out', out], {
      cwd: ROOT,
    });
    const map = JSON.parse(readFileSync(out, 'utf8'));
    expect(map).toEqual(JSON.parse(JSON.stringify(await bundlePackages(['uuid']))));
    expect(stderr).toMatch(/^codemode-executor bundle: wrote 1 module \(\d+ bytes\) to .*modules\.json\n$/);
    const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
    try {
      const result = await executor.execute("async () => (await import('uuid')).validate('not a uuid')", [], {
        modules: map,
      });
      expect(result).toEqual({ result: false, logs: [] });
    } finally {
      await executor.dispose();
    }
  });

  it('prints a refusal with its package, chain and reason, and exits 1', async () => {
    const failed = await run('node', ['--import', 'tsx', 'src/server/cli.ts', 'bundle', 'dotenv'], { cwd: ROOT }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('Cannot bundle "dotenv" for the sandbox: it imports the Node built-in "path"');
  });

  it('suggests the flag an unknown one most likely meant, and needs a package', () => {
    expect(refusal('zod', '--ot', 'x.json')).toBe('unknown flag --ot (did you mean --out?)');
    expect(refusal('zod', '--max-bundle-byte', '9')).toBe(
      'unknown flag --max-bundle-byte (did you mean --max-bundle-bytes?)',
    );
    expect(refusal('--out', 'x.json')).toBe(
      'bundle needs at least one package name: codemode-executor bundle zod date-fns --out modules.json',
    );
    expect(refusal('zod', '--max-set-bytes', 'lots')).toMatch(/^--max-set-bytes /);
  });

  it('takes every flag', () => {
    expect(
      parseBundleCommand([
        'zod@^4',
        'uuid',
        '-o',
        'm.json',
        '--from',
        '/srv/app',
        '--cache-dir',
        '/tmp/c',
        '--registry-dir',
        '/tmp/r',
        '--max-bundle-bytes',
        '100',
        '--max-set-bytes',
        '200',
        '--no-minify',
      ]),
    ).toEqual({
      help: false,
      specs: ['zod@^4', 'uuid'],
      out: 'm.json',
      options: {
        from: '/srv/app',
        cacheDir: '/tmp/c',
        registryDir: '/tmp/r',
        maxBundleBytes: 100,
        maxSetBytes: 200,
        minify: false,
      },
    });
  });
});
