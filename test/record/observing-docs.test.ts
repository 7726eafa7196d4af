/**
 * docs/observing.md's snippets ("Live events", "Traces", "Run records and replay"), run as a host runs them: each is written
 * into the package (so it imports the package by its name, which resolves to the build), type-checked
 * under strict, run with Node, and must print what the page says it prints. Needs `npm run build`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { section, typeScriptSnippets } from '../package/markdown.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it.each([
  ['Live events', 'live events'],
  ['Traces', 'traces'],
  ['Run records and replay', 'record and replay'],
])(
  "runs docs/observing.md's %s snippets, type-checked, and each prints what the page says",
  async (heading) => {
    const page = await readFile(join(ROOT, 'docs', 'observing.md'), 'utf8');
    const snippets = typeScriptSnippets(section(page, heading));
    expect(snippets.length).toBeGreaterThanOrEqual(1);
    // Inside the package, so `@supolka/cloudflare-codemode-executor` resolves to this checkout's build.
    const dir = await mkdtemp(join(ROOT, 'test', 'record', 'snippets-'));
    try {
      const files = await Promise.all(
        snippets.map(async (snippet, index) => {
          const file = join(dir, `observing-${index + 1}.ts`);
          await writeFile(file, snippet.source);
          return file;
        }),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--types', 'node'];
      await run(process.execPath, [tsc, ...flags, ...files], { cwd: ROOT });
      for (const [index, snippet] of snippets.entries()) {
        expect(snippet.prints, `snippet ${index + 1} says what it prints`).toBeDefined();
        const { stdout } = await run(process.execPath, ['--import', 'tsx', files[index]!], { cwd: ROOT });
        expect(stdout.trim(), `docs/observing.md snippet ${index + 1}`).toBe(snippet.prints?.trim());
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  180_000,
);
