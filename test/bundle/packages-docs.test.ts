/**
 * docs/packages.md's snippets, run as a host runs them: each is written into the package (so it
 * imports the package by its name, which resolves to the build), type-checked under strict, run
 * with Node, and must print what the page says. The command line runs as the page writes it, the
 * Worker is type-checked against upstream's and the Workers declarations, and the daemon snippet
 * connects to a real daemon. Needs `npm run build`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { shellLines, typeScriptSnippets } from '../package/markdown.js';
import { startDaemon, stopAllDaemons } from '../support/daemon.js';
import { type LoopbackRegistry, packDirectory, startLoopbackRegistry } from '../support/loopback-registry.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
afterAll(stopAllDaemons);

it("runs docs/packages.md's snippets and command, type-checked, and each prints what the page says", async () => {
  const page = await readFile(join(ROOT, 'docs', 'packages.md'), 'utf8');
  const snippets = typeScriptSnippets(page);
  expect(snippets.map((snippet) => snippet.typeCheckOnly)).toEqual([false, false, false, true, false]);
  expect(shellLines(page)).toEqual(['npx codemode-executor bundle zod date-fns --out modules.json']);
  const daemon = await startDaemon();
  const dir = await mkdtemp(join(ROOT, 'test', 'bundle', 'snippets-'));
  // The registry snippet's npm asks a registry on loopback, which serves the zod this repository
  // installed, packed by npm: nothing leaves the machine.
  let registry: LoopbackRegistry | undefined;
  try {
    registry = await startLoopbackRegistry([await packDirectory(join(ROOT, 'node_modules', 'zod'))]);
    const snippetEnv = {
      ...process.env,
      npm_config_registry: registry.url,
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_fetch_retries: '0',
    };
    // The page's command, through the build's bin, where the snippets run.
    const [, , ...args] = shellLines(page)[0]!.split(' ');
    await run(process.execPath, [join(ROOT, 'dist', 'server', 'cli.js'), ...args], { cwd: dir });
    const sources = snippets.map((snippet) => snippet.source.replaceAll('ws://127.0.0.1:8787', daemon.url));
    expect(sources[4]).not.toBe(snippets[4]!.source);
    const files = await Promise.all(
      sources.map(async (source, index) => {
        const file = join(dir, `packages-${index + 1}.ts`);
        await writeFile(file, source);
        return file;
      }),
    );
    const nodeFiles = files.filter((_, index) => !snippets[index]!.typeCheckOnly);
    const strict = ['--noEmit', '--strict', '--target', 'es2022', '--skipLibCheck'];
    await run(process.execPath, [TSC, ...strict, '--module', 'nodenext', '--types', 'node', ...nodeFiles], {
      cwd: ROOT,
    });
    // A Worker project bundles, so it imports JSON as a bundler does.
    const workerFlags = ['--module', 'preserve', '--moduleResolution', 'bundler', '--resolveJsonModule'];
    await run(process.execPath, [TSC, ...strict, ...workerFlags, '--types', '@cloudflare/workers-types', files[3]!], {
      cwd: ROOT,
    });
    for (const [index, snippet] of snippets.entries()) {
      if (snippet.typeCheckOnly) continue;
      expect(snippet.prints, `snippet ${index + 1} says what it prints`).toBeDefined();
      const { stdout } = await run(process.execPath, ['--import', 'tsx', files[index]!], { cwd: dir, env: snippetEnv });
      expect(stdout.trim(), `docs/packages.md snippet ${index + 1}`).toBe(snippet.prints?.trim());
    }
    expect(registry.requests).toContain(
      `/zod/-/zod-${JSON.parse(await readFile(join(ROOT, 'node_modules', 'zod', 'package.json'), 'utf8')).version}.tgz`,
    );
  } finally {
    await registry?.close();
    await rm(dir, { recursive: true, force: true });
  }
}, 240_000);
