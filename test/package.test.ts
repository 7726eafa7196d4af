/**
 * The packed package, as a consumer gets it: `npm pack` of the built package, installed from the
 * tarball into an empty project, imported at run time by node and type-checked by tsc. Then the
 * dialect's own types (every line of the peer range) accept CodemodeExecutor as their Executor.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// Offline from the npm cache; no install scripts (workerd's would fetch a binary the root entry never uses).
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=optional'];

async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${message}\n${stdout}\n${stderr}`);
  }
}

/** dist is built by `npm test`; a lone run builds it when it is missing or older than any source it ships. */
function distIsCurrent(): boolean {
  const built = join(root, 'dist/index.d.ts');
  if (!existsSync(built)) return false;
  return newestMtime(join(root, 'src')) <= statSync(built).mtimeMs;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let dir: string;
let consumer: string;

beforeAll(async () => {
  if (!distIsCurrent()) await run('npm', ['run', 'build'], root);
  dir = await mkdtemp(join(tmpdir(), 'package-test-'));
  // --ignore-scripts: `prepare` would rebuild; dist is already current.
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], root);
  const tarball = (await readdir(dir)).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${dir}`);
  consumer = join(dir, 'consumer');
  await mkdir(consumer);
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', join(dir, tarball), ...INSTALL_FLAGS], consumer);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed package in an empty project', () => {
  it('imports at run time with node', async () => {
    await writeFile(join(consumer, 'runtime.mjs'), RUNTIME_CHECK);
    const output = JSON.parse(await run(process.execPath, ['runtime.mjs'], consumer)) as Record<string, unknown>;
    expect(output).toEqual({
      exports: ['function', 'function', 'function'],
      normalized: 'async () => {\nconst a = 40\nreturn (a + 2)\n}',
      sanitized: 'list_issues',
      executed: { result: 42, logs: ['[warn] late'] },
    });
  });

  it('type-checks with tsc, without skipLibCheck and without the optional peer', async () => {
    await writeFile(join(consumer, 'types.ts'), TYPES_CHECK);
    await writeFile(join(consumer, 'tsconfig.json'), tsconfig(['types.ts'], { skipLibCheck: false }));
    await run(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer);
    // The check above is only worth something if a type error fails it.
    await writeFile(
      join(consumer, 'wrong.ts'),
      "import { sanitizeToolName } from '@supolka/cloudflare-codemode-executor';\nexport const n: number = sanitizeToolName('a');\n",
    );
    await writeFile(join(consumer, 'tsconfig.wrong.json'), tsconfig(['wrong.ts'], { skipLibCheck: false }));
    await expect(run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], consumer)).rejects.toThrow(/TS2322/);
  });

  it('is an Executor, with providers and options, to every dialect line of the peer range', async () => {
    const lines = {
      'codemode-0-2': '@cloudflare/codemode@0.2.2',
      'codemode-0-3': '@cloudflare/codemode@0.3.8',
      'codemode-0-4': '@cloudflare/codemode@0.4.4',
      'codemode-0-5': '@cloudflare/codemode@0.5.6',
    };
    await run(
      'npm',
      ['install', ...Object.entries(lines).map(([alias, spec]) => `${alias}@npm:${spec}`), ...INSTALL_FLAGS],
      consumer,
    );
    const files: string[] = [];
    for (const alias of Object.keys(lines)) {
      const file = `${alias}.ts`;
      // 0.2.x and 0.3.x declare no ExecuteOptions: their execute takes two arguments.
      const withOptions = alias === 'codemode-0-4' || alias === 'codemode-0-5';
      await writeFile(join(consumer, file), dialectCheck(alias, withOptions));
      files.push(file);
    }
    // Upstream's own declarations import cloudflare:workers, ai and zod, which this project lacks.
    await writeFile(join(consumer, 'tsconfig.dialect.json'), tsconfig(files, { skipLibCheck: true }));
    await run(process.execPath, [tsc, '-p', 'tsconfig.dialect.json'], consumer);
  });
});

function tsconfig(files: string[], { skipLibCheck }: { skipLibCheck: boolean }): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      types: [],
      noEmit: true,
      skipLibCheck,
    },
    files,
  });
}

const RUNTIME_CHECK = `import { CodemodeExecutor, normalizeCode, sanitizeToolName } from '@supolka/cloudflare-codemode-executor';

const native = {
  async execute(request) {
    const envelope = JSON.parse(await request.dispatch('codemode', 'add', '[20,22]'));
    return { result: envelope.result, logs: [{ level: 'warn', message: 'late' }] };
  },
  async invokeHandle() { throw new Error('unused'); },
  async closeHandles() {},
  async dispose() {},
};
const executed = await new CodemodeExecutor(native).execute('6 * 7', [{ name: 'codemode', fns: { add: (a, b) => a + b } }]);
console.log(JSON.stringify({
  exports: [typeof CodemodeExecutor, typeof normalizeCode, typeof sanitizeToolName],
  normalized: normalizeCode('const a = 40\\na + 2'),
  sanitized: sanitizeToolName('list-issues'),
  executed,
}));
`;

const TYPES_CHECK = `import {
  CodemodeExecutor,
  ExecutionTimeoutError,
  normalizeCode,
  sanitizeToolName,
  type CodemodeExecuteResult,
  type Executor,
  type ExtendedExecuteOptions,
  type ExtendedProvider,
} from '@supolka/cloudflare-codemode-executor';

declare const native: Executor;
const executor = new CodemodeExecutor(native);
const provider: ExtendedProvider = { name: 'gh', fns: { 'list-issues': async (input: { repo: string }) => [input.repo] }, positionalArgs: true };
const options: ExtendedExecuteOptions = { timeout: null, outbound: null, modules: { 'lib.js': 'export const x = 1' } };
export const result: Promise<CodemodeExecuteResult> = executor.execute('1', [provider], options);
export const identifier: string = sanitizeToolName('list-issues') + normalizeCode('1');
export const timedOut: boolean = ExecutionTimeoutError.matches('x');
export const disposed: Promise<void> = executor.dispose();
// @ts-expect-error the code is a string
normalizeCode(42);
// @ts-expect-error a provider needs fns
executor.execute('1', [{ name: 'gh' }]);
`;

function dialectCheck(alias: string, withOptions: boolean): string {
  const optionTypes = withOptions ? ', ExecuteOptions' : '';
  return `import type { Executor, ExecuteResult, ResolvedProvider${optionTypes} } from '${alias}';
import { CodemodeExecutor, type Executor as NativeExecutor } from '@supolka/cloudflare-codemode-executor';

declare const native: NativeExecutor;
declare const providers: ResolvedProvider[];
declare const fns: Record<string, (...args: unknown[]) => Promise<unknown>>;
${withOptions ? 'declare const options: ExecuteOptions;' : ''}
const executor: Executor = new CodemodeExecutor(native);
const adapter = new CodemodeExecutor(native);
export const fromProviders: Promise<ExecuteResult> = adapter.execute('1', providers${withOptions ? ', options' : ''});
export const fromRecord: Promise<ExecuteResult> = adapter.execute('1', fns);
export { executor };
`;
}
