/**
 * What the package test checks in the published files themselves: a program that reaches every
 * entry's declarations, the install scripts a package must not have, and whether each source map's
 * sources are in the package.
 */

import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Imports every subpath export and names a type from each, so tsc (without skipLibCheck) checks
 * every declaration they reach. Nothing in it needs Node's types: the declarations must not either.
 */
export const ENTRIES_CHECK = `import { CodemodeExecutor, connect, type ConnectOptions, type Executor } from '@supolka/cloudflare-codemode-executor';
import { IsolateExecutor, type IsolateExecutorOptions, type PoolStats } from '@supolka/cloudflare-codemode-executor/isolate';
import { createExecutorServer, runDaemon, type ExecutorServerOptions } from '@supolka/cloudflare-codemode-executor/server';
import { createEnvelopeDispatch, type ExecuteRequest } from '@supolka/cloudflare-codemode-executor/protocol';
import '@supolka/cloudflare-codemode-executor/register';

export const options: IsolateExecutorOptions = { pool: { maxWorkers: 1 } };
export const native: Executor = new IsolateExecutor(options);
export const executor = new CodemodeExecutor(native);
export const remote: (url: string, options?: ConnectOptions) => Promise<Executor> = connect;
export declare const stats: PoolStats;
export declare const request: ExecuteRequest;
export declare const serverOptions: ExecutorServerOptions;
export { createEnvelopeDispatch, createExecutorServer, runDaemon };
`;

/** The scripts npm runs when a package is installed, and warns about when it does not. */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

interface SourceMap {
  sourceRoot?: string;
  sources: string[];
  sourcesContent?: (string | null)[];
}

/**
 * Every `.map` file under the installed package, and each source one of them names that is neither
 * in the package nor embedded in the map, as `map -> source`.
 */
export async function unresolvedMapSources(packageRoot: string): Promise<{ maps: number; unresolved: string[] }> {
  const files = (await readdir(packageRoot, { recursive: true })).filter((file) => file.endsWith('.map'));
  const unresolved: string[] = [];
  for (const file of files) {
    const path = join(packageRoot, file);
    const map = JSON.parse(await readFile(path, 'utf8')) as SourceMap;
    map.sources.forEach((source, index) => {
      if (typeof map.sourcesContent?.[index] === 'string') return;
      const target = resolve(dirname(path), map.sourceRoot ?? '', source);
      if (relative(packageRoot, target).startsWith('..') || !existsSync(target))
        unresolved.push(`${file} -> ${source}`);
    });
  }
  return { maps: files.length, unresolved };
}
