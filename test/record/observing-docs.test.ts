/**
 * docs/observing.md's snippets ("Live events", "Traces", "Run records and replay"), run as a host runs them: each is written
 * into the package (so it imports the package by its name, which resolves to the build), type-checked
 * under strict, run with Node, and must print what the page says it prints. Needs `npm run build`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Snippet, section, typeScriptSnippets } from '../package/markdown.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECTIONS = [
  ['Live events', 'live-events'],
  ['Traces', 'traces'],
  ['Run records and replay', 'records'],
] as const;

let dir: string;
/** Each section's snippets and the files they are written to. */
const written = new Map<string, { snippets: Snippet[]; files: string[] }>();
/** The error lines of one strict tsc run over every section's files (none when it passed). */
let typeErrors: Promise<string[]>;

beforeAll(async () => {
  const page = await readFile(join(ROOT, 'docs', 'observing.md'), 'utf8');
  // Inside the package, so `@supolka/cloudflare-codemode-executor` resolves to this checkout's build.
  dir = await mkdtemp(join(ROOT, 'test', 'record', 'snippets-'));
  for (const [heading, prefix] of SECTIONS) {
    const snippets = typeScriptSnippets(section(page, heading));
    const files = await Promise.all(
      snippets.map(async (snippet, index) => {
        const file = join(dir, `${prefix}-${index + 1}.ts`);
        await writeFile(file, snippet.source);
        return file;
      }),
    );
    written.set(heading, { snippets, files });
  }
  // One tsc start for every section: starting it costs far more than the snippets. skipLibCheck: the
  // snippets are what this checks; checking @types/node and the package's declarations again cost
  // about 10 s of CPU a run, and test/package.test.ts checks the declarations without it.
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = [
    '--noEmit',
    '--strict',
    '--skipLibCheck',
    '--module',
    'nodenext',
    '--target',
    'es2022',
    '--types',
    'node',
  ];
  const files = [...written.values()].flatMap((section) => section.files);
  typeErrors = run(process.execPath, [tsc, ...flags, ...files], { cwd: ROOT }).then(
    () => [],
    (error: { stdout?: string; stderr?: string; message: string }) => {
      const lines = `${error.stdout ?? ''}${error.stderr ?? ''}`.split('\n').filter((line) => /error TS\d+/.test(line));
      return lines.length > 0 ? lines : [error.message];
    },
  );
}, 180_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

it.each(SECTIONS)(
  "runs docs/observing.md's %s snippets, type-checked, and each prints what the page says",
  async (heading) => {
    const { snippets, files } = written.get(heading)!;
    expect(snippets.length).toBeGreaterThanOrEqual(1);
    // This section's errors, and any that names no snippet at all (each section's test reports those).
    const names = [...written.values()].flatMap((section) => section.files.map((file) => basename(file)));
    const mine = files.map((file) => basename(file));
    const errors = (await typeErrors).filter(
      (line) => mine.some((name) => line.includes(name)) || !names.some((name) => line.includes(name)),
    );
    expect(errors, `tsc on docs/observing.md's ${heading} snippets`).toEqual([]);
    for (const [index, snippet] of snippets.entries()) {
      expect(snippet.prints, `snippet ${index + 1} says what it prints`).toBeDefined();
      const { stdout } = await run(process.execPath, ['--import', 'tsx', files[index]!], { cwd: ROOT });
      expect(stdout.trim(), `docs/observing.md snippet ${index + 1}`).toBe(snippet.prints?.trim());
    }
  },
  180_000,
);
