/**
 * The two trees `--against` compares, each loaded from its dist/ by file URL, so that both run
 * the same kind of code (tsc's output, not tsx's) and each tree's own node_modules (its workerd,
 * its capnweb) serve it: ours is this tree's dist/, which `npm run bench` builds first; theirs is
 * another checkout's. The other's API may be older, so only what
 * every release of the project has is used: `new IsolateExecutor(options)`, `stats()`,
 * `dispose()`, and `new CodemodeExecutor(executor).execute(code, providers)`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import type { IsolateExecutor } from '../src/isolate/index.js';
import { againstText } from './texts.js';

type PoolOptions = ConstructorParameters<typeof IsolateExecutor>[0];

/** An IsolateExecutor of either tree, and the dialect over it. */
export interface TreeExecutor {
  pool: Pick<IsolateExecutor, 'stats' | 'dispose'>;
  dialect: Pick<CodemodeExecutor, 'execute'>;
}

export interface Tree {
  /** Where it comes from, for the header: the directory and its commit. */
  label: string;
  create(options?: PoolOptions): TreeExecutor;
}

function commitOf(dir: string): string {
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    });
    return dirty === '' ? commit : `${commit} with uncommitted changes`;
  } catch {
    return 'not a git checkout';
  }
}

function treeOf(label: string, Isolate: typeof IsolateExecutor, Dialect: typeof CodemodeExecutor): Tree {
  return {
    label,
    create(options) {
      const pool = new Isolate(options);
      return { pool, dialect: new Dialect(pool) };
    },
  };
}

/** This tree, from the dist/ `npm run bench` built. */
export function oursTree(): Promise<Tree> {
  return loadTree(resolve(dirname(fileURLToPath(import.meta.url)), '..'));
}

async function exportOf(dir: string, file: string, name: string): Promise<unknown> {
  const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
  if (typeof module[name] !== 'function') throw new Error(againstText.noExport(dir, file, name));
  return module[name];
}

/** What keeps `dir` from being loaded as a built tree, or undefined: checked before anything starts. */
export function unbuiltTree(dir: string): string | undefined {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) return againstText.noDirectory(dir);
  for (const file of ['dist/index.js', 'dist/isolate/index.js'])
    if (!existsSync(join(root, file))) return againstText.noBuild(root, file);
  return undefined;
}

/** The tree built in `dir`, from its dist/; fails naming `dir` when it is not built. */
export async function loadTree(dir: string): Promise<Tree> {
  const problem = unbuiltTree(dir);
  if (problem !== undefined) throw new Error(problem);
  const root = resolve(dir);
  const Dialect = await exportOf(root, 'dist/index.js', 'CodemodeExecutor');
  const Isolate = await exportOf(root, 'dist/isolate/index.js', 'IsolateExecutor');
  // Their classes are taken at the shape ours has; only the members named above are called.
  return treeOf(
    `${root}/dist (${commitOf(root)})`,
    Isolate as typeof IsolateExecutor,
    Dialect as typeof CodemodeExecutor,
  );
}
