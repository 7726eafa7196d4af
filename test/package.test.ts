/**
 * The packed package, as a consumer gets it: `npm pack` of the built package, installed from the
 * tarball into an empty project, imported at run time by node and type-checked by tsc. The
 * README's snippets (and docs/moving-a-host.md's) are read from the installed copy, type-checked
 * under `strict`, run, and must print what the page says. Then the dialect's own types (every line
 * of the peer range) accept CodemodeExecutor as their Executor. The declarations are checked under
 * TypeScript 5.9 and 7 (which loads no `@types` package unless told to), and so is
 * docs/durable-state.md's typed host of upstream's runtime, with skipLibCheck off. The README's
 * Install section is followed as written: the tarball it names, its quick start, its check of the
 * register entry.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedFiles, relativeLinks, section, shellLines, typeScriptSnippets } from './package/markdown.js';
import { ENTRIES_CHECK, INSTALL_SCRIPTS, unresolvedMapSources } from './package/published-files.js';
import { builtSinceSources } from './support/build-state.js';
import { bundleWorker } from './support/workerd.js';

const root = resolve(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/** Both TypeScript lines a user may have: 5.9, and 7 (the `typescript-7` alias of the dev dependencies). */
const TYPESCRIPTS = [
  { major: '5.9', tsc },
  { major: '7', tsc: join(root, 'node_modules', 'typescript-7', 'bin', 'tsc') },
];
const WORKERD = join(root, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
const PACKAGE = '@supolka/cloudflare-codemode-executor';
// Offline from the npm cache. No install scripts: workerd's binary comes from its platform package
// (an optional dependency, so optional dependencies are installed), and its script only copies it.
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'];

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      env: { ...process.env, ...env },
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${message}\n${stdout}\n${stderr}`);
  }
}

/** `name@version` of a package this repository has installed, so the consumer's install hits the npm cache. */
function installed(name: string): string {
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return `${name}@${manifest.version}`;
}

/**
 * An empty ESM project with the tarball and `extra` installed; returns it and npm's warnings.
 * `setup`: the shell line that makes the project, instead of writing its package.json here.
 */
async function consumerProject(
  name: string,
  tarball: string,
  extra: string[],
  flags = INSTALL_FLAGS,
  setup?: string,
): Promise<{ project: string; warnings: string }> {
  const project = join(dir, name);
  await mkdir(project);
  if (setup === undefined)
    await writeFile(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  else await run('sh', ['-c', setup], project);
  const { stderr } = await runWithStderr('npm', ['install', tarball, ...extra, ...flags], project);
  return { project, warnings: stderr };
}

/** The first `count` bytes of a file, as text, without reading the rest (a binary may be 100 MB). */
async function firstBytes(path: string, count: number): Promise<string> {
  const file = await open(path);
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(count), 0, count, 0);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await file.close();
  }
}

/** The README's line that makes a new project for the package, in its Install section. */
function readmeProjectLine(readme: string): string {
  const line = shellLines(section(readme, 'Install')).find((candidate) => candidate.startsWith('npm init -y'));
  if (!line) throw new Error("The README's Install section shows no `npm init -y` line for a new project");
  return line;
}

/** Every dialect line of the peer range, by the alias the consumer installs it under. */
const DIALECT_LINES = {
  'codemode-0-2': '@cloudflare/codemode@0.2.2',
  'codemode-0-3': '@cloudflare/codemode@0.3.8',
  'codemode-0-4': '@cloudflare/codemode@0.4.4',
  'codemode-0-5': '@cloudflare/codemode@0.5.6',
};

async function runWithStderr(command: string, args: string[], cwd: string): Promise<{ stderr: string }> {
  try {
    return await promisify(execFile)(command, args, { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${message}\n${stdout}\n${stderr}`);
  }
}

/** dist is built by `npm test`; a lone run builds it when it is missing or older than any source it ships. */
function distIsCurrent(): boolean {
  return builtSinceSources('dist/index.d.ts');
}

let dir: string;
/** The file name `npm pack` gave the tarball. */
let tarballName: string;
/** The tarball, `ws` and the type packages a Node user of the README has. */
let consumer: string;
/**
 * The tarball and upstream's helpers with what they load: a Node host of docs/moving-a-host.md,
 * with the type packages docs/durable-state.md's typed host names.
 */
let host: string;
/** The tarball alone, installed as a user installs it (scripts allowed): no `@types` package at all. */
let bare: string;
/** What npm printed on stderr while installing `bare`. */
let bareInstallWarnings: string;

beforeAll(async () => {
  if (!distIsCurrent()) await run('npm', ['run', 'build'], root);
  dir = await mkdtemp(join(tmpdir(), 'package-test-'));
  // --ignore-scripts: `prepack` would rebuild; dist is already current.
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], root);
  const tarball = (await readdir(dir)).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${dir}`);
  tarballName = tarball;
  const types = [installed('@types/node')];
  // The three projects install at once: npm's cache is safe to share, and they wait mostly on it.
  const projects = await Promise.all([
    consumerProject('consumer', join(dir, tarball), [
      installed('ws'),
      installed('@types/ws'),
      ...types,
      // Every dialect line of the peer range, under an alias, so none of them is the optional peer.
      ...Object.entries(DIALECT_LINES).map(([alias, spec]) => `${alias}@npm:${spec}`),
    ]),
    consumerProject(
      'bare',
      join(dir, tarball),
      [],
      ['--prefer-offline', '--no-audit', '--no-fund'],
      readmeProjectLine(readFileSync(join(root, 'README.md'), 'utf8')),
    ),
    consumerProject('host', join(dir, tarball), [
      installed('@cloudflare/codemode'),
      installed('@modelcontextprotocol/sdk'),
      installed('zod'),
      installed('@cfworker/json-schema'),
      // What docs/durable-state.md's typed host adds, for upstream's declarations.
      installed('@cloudflare/workers-types'),
      installed('ai'),
      ...types,
    ]),
  ]);
  [{ project: consumer }, { project: bare, warnings: bareInstallWarnings }, { project: host }] = projects;
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

  // The type checks below run side by side, each tsc on files of its own: a tsc 5.9 keeps one core
  // busy, so one after another they left the other core to the file beside, which mostly waits.
  it.concurrent.each(TYPESCRIPTS.map(({ major, tsc }) => [major, tsc]))(
    "type-checks every entry's declarations and the root's types under TypeScript %s, strict, with no @types, no optional peer and no flag",
    async (major, compiler) => {
      expect((await run(process.execPath, [compiler, '--version'], bare)).trim()).toMatch(
        new RegExp(`^Version ${major.replace('.', '\\.')}\\.`),
      );
      expect(existsSync(join(bare, 'node_modules', '@types'))).toBe(false);
      expect(existsSync(join(bare, 'node_modules', '@cloudflare', 'codemode'))).toBe(false);
      // Files of each line's own, as both lines check at once; one tsc start checks them all.
      const files = [`entries-${major}.ts`, `types-${major}.ts`, `wrong-${major}.ts`];
      await writeFile(join(bare, files[0]!), ENTRIES_CHECK);
      await writeFile(join(bare, files[1]!), TYPES_CHECK);
      // The check is only worth something if a type error fails it: its only errors must be the planted one's.
      await writeFile(
        join(bare, files[2]!),
        "import { sanitizeToolName } from '@supolka/cloudflare-codemode-executor';\nexport const n: number = sanitizeToolName('a');\n",
      );
      // The user's default: no `types` option, so TypeScript 7 loads no @types package.
      await writeFile(join(bare, `tsconfig.${major}.json`), tsconfig(files, { skipLibCheck: false }));
      const failed = await run(process.execPath, [compiler, '-p', `tsconfig.${major}.json`], bare).then(
        () => '',
        (error: Error) => error.message,
      );
      const errors = failed.split('\n').filter((line) => /error TS\d+/.test(line));
      expect(errors).toEqual([
        expect.stringMatching(new RegExp(`^wrong-${major.replace('.', '\\.')}\\.ts\\(2,14\\): error TS2322: `)),
      ]);
    },
  );

  it.concurrent('is an Executor, with providers and options, to every dialect line of the peer range', async () => {
    // The consumer installed every line (beforeAll), each under its alias.
    const files: string[] = [];
    for (const alias of Object.keys(DIALECT_LINES)) {
      const file = `${alias}.ts`;
      // 0.2.x and 0.3.x declare no ExecuteOptions: their execute takes two arguments.
      const withOptions = alias === 'codemode-0-4' || alias === 'codemode-0-5';
      await writeFile(join(consumer, file), dialectCheck(alias, withOptions));
      files.push(file);
    }
    // Upstream's own declarations import cloudflare:workers, ai and zod, which this project lacks.
    await writeFile(join(consumer, 'tsconfig.dialect.json'), tsconfig(files, { skipLibCheck: true, types: [] }));
    await run(process.execPath, [tsc, '-p', 'tsconfig.dialect.json'], consumer);
  });

  it('installs with no install script of its own (npm names none of ours)', async () => {
    const manifest = JSON.parse(await readFile(join(bare, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
    expect(bareInstallWarnings).not.toContain(`${PACKAGE}@`);
  });

  it('has a bin that prints the version it was installed at', async () => {
    const manifest = JSON.parse(await readFile(join(bare, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as {
      version: string;
    };
    const printed = await run(join(bare, 'node_modules', '.bin', 'codemode-executor'), ['--version'], bare);
    expect(printed).toMatch(
      new RegExp(`^codemode-executor ${manifest.version.replaceAll('.', '\\.')} \\(protocol \\d+\\)\\n$`),
    );
  });

  it('ships the files its source maps point at, so a stack trace names files that exist', async () => {
    const installedRoot = join(bare, 'node_modules', PACKAGE);
    const { maps, unresolved } = await unresolvedMapSources(installedRoot);
    expect(maps).toBeGreaterThan(50);
    expect(unresolved).toEqual([]);
  });

  it('ships every file its README and docs link to', async () => {
    const installedRoot = join(consumer, 'node_modules', PACKAGE);
    const pages = [
      'README.md',
      ...(await readdir(join(installedRoot, 'docs')))
        .filter((file) => file.endsWith('.md'))
        .map((file) => `docs/${file}`),
    ];
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of relativeLinks(await readFile(join(installedRoot, page), 'utf8'))) {
        const path = resolve(dirname(join(installedRoot, page)), target);
        if (relative(installedRoot, path).startsWith('..') || !existsSync(path)) broken.push(`${page} -> ${target}`);
      }
    }
    expect(pages).toContain('docs/moving-a-host.md');
    expect(broken).toEqual([]);
  });

  it('loads with require(), which the Node lines its engines field admits all have', async () => {
    const output = await run(
      process.execPath,
      ['-e', `console.log(typeof require(${JSON.stringify(PACKAGE)}).CodemodeExecutor)`],
      consumer,
    );
    expect(output.trim()).toBe('function');
  });

  it("installs as the README's Install section says, from the tarball npm pack writes, and runs its quick start as printed", async () => {
    const readme = await readFile(join(bare, 'node_modules', PACKAGE, 'README.md'), 'utf8');
    const install = shellLines(section(readme, 'Install'));
    const prose = section(readme, 'Install').replace(/\s+/g, ' ');
    // The registry has no such package yet; the section says so, and installs what npm pack writes.
    expect(prose).toContain(`\`npm install ${PACKAGE}\` answers \`404 Not Found\``);
    expect(install).toContain('npm ci && npm pack');
    const fromTarball = install.find((line) => line.startsWith('npm install ') && line.endsWith('.tgz'));
    expect(fromTarball?.split('/').at(-1)).toBe(tarballName);
    // `bare` is that install: the tarball alone, into an empty project, scripts allowed.
    const [quickStart] = typeScriptSnippets(readme);
    expect(prose).toContain('saved in your project as `quickstart.mjs`, `node quickstart.mjs` prints');
    await writeFile(join(bare, 'quickstart.mjs'), quickStart!.source);
    expect((await run(process.execPath, ['quickstart.mjs'], bare)).trim()).toBe(quickStart!.prints?.trim());
  });

  it("runs a README snippet saved as .ts under tsx in the project the README's npm init line makes", async () => {
    const readme = await readFile(join(bare, 'node_modules', PACKAGE, 'README.md'), 'utf8');
    // `bare` was made by that line; npm 11's npm init alone writes "type": "commonjs".
    expect(readmeProjectLine(readme)).toBe('npm init -y && npm pkg set type=module');
    const manifest = JSON.parse(await readFile(join(bare, 'package.json'), 'utf8')) as { type?: string };
    expect(manifest.type).toBe('module');
    const [quickStart] = typeScriptSnippets(readme);
    await writeFile(join(bare, 'quickstart.ts'), quickStart!.source);
    const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    expect((await run(process.execPath, [tsx, 'quickstart.ts'], bare)).trim()).toBe(quickStart!.prints?.trim());
    // Where the project stays CommonJS, the README's way out is the .mts extension.
    const prose = section(readme, 'Install').replace(/\s+/g, ' ');
    expect(prose).toContain('Top-level await is currently not supported with the "cjs" output format');
    expect(prose).toContain('save the snippets as `.mts` instead');
    await run('npm', ['pkg', 'set', 'type=commonjs'], bare);
    try {
      await expect(run(process.execPath, [tsx, 'quickstart.ts'], bare)).rejects.toThrow(
        'Top-level await is currently not supported with the "cjs" output format',
      );
      await writeFile(join(bare, 'quickstart.mts'), quickStart!.source);
      expect((await run(process.execPath, [tsx, 'quickstart.mts'], bare)).trim()).toBe(quickStart!.prints?.trim());
    } finally {
      await run('npm', ['pkg', 'set', 'type=module'], bare);
    }
  });

  it('names the install-scripts warning npm prints for workerd, whose script the package does not need', async () => {
    const prose = section(await readFile(join(bare, 'node_modules', PACKAGE, 'README.md'), 'utf8'), 'Install').replace(
      /\s+/g,
      ' ',
    );
    const warning = /`(install scripts not yet covered by allowScripts)`/.exec(prose)?.[1];
    const entry = /`(workerd@<version> \(postinstall: [^)]+\))`/.exec(prose)?.[1];
    expect([warning, entry]).toEqual([
      'install scripts not yet covered by allowScripts',
      'workerd@<version> (postinstall: node install.js)',
    ]);
    // What npm printed while installing `bare` as a user does: it warns, and for now still runs the script.
    expect(bareInstallWarnings).toContain(warning);
    expect(bareInstallWarnings).toContain(entry!.replace('<version>', installed('workerd').split('@')[1]!));
    // Without the script (the consumer installed with --ignore-scripts) the launcher is still there,
    // not the binary it would have linked over it, and the README's snippets run on workerd all the same (next test).
    expect(await firstBytes(join(consumer, 'node_modules', 'workerd', 'bin', 'workerd'), 2)).toBe('#!');
    expect(prose).toContain('`npm install-scripts deny workerd`');
  });

  // The snippets of the README and of two docs, side by side: each project compiles and runs its own.
  it.concurrent("runs the README's snippets, type-checked under strict, and each prints what the README says", async () => {
    const readme = await readFile(join(consumer, 'node_modules', PACKAGE, 'README.md'), 'utf8');
    const snippets = typeScriptSnippets(readme);
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    const token = `readme-${process.pid}`;
    const daemon = await startReadmeDaemon(readme, token);
    try {
      // The snippet connects where the README's daemon listens; this one listens on a free port.
      const sources = snippets.map((snippet) => snippet.source.replaceAll('ws://127.0.0.1:8787', daemon.url));
      expect(sources.some((source, index) => source !== snippets[index]!.source)).toBe(true);
      // A snippet reads `process`: its own code needs Node's types, which TypeScript 7 loads only when named.
      // skipLibCheck: the snippets are what this checks; the declarations are checked without it above,
      // and checking @types/node again cost about 8 s of CPU.
      const options = { skipLibCheck: true, types: ['node'] };
      const outputs = await compileAndRun(consumer, 'readme', sources, options, [], { CODEMODE_EXECUTOR_TOKEN: token });
      await writeFile(
        join(consumer, 'tsconfig.readme-7.json'),
        tsconfig(
          sources.map((_, index) => `readme-${index + 1}.ts`),
          options,
        ),
      );
      await run(process.execPath, [TYPESCRIPTS[1]!.tsc, '-p', 'tsconfig.readme-7.json'], consumer);
      snippets.forEach((snippet, index) => {
        expect(snippet.prints, `README snippet ${index + 1} says what it prints`).toBeDefined();
        expect(outputs[index]?.trim(), `README snippet ${index + 1}`).toBe(snippet.prints?.trim());
      });
    } finally {
      await daemon.stop();
    }
  });

  it.concurrent("runs docs/moving-a-host.md's snippets under the register entry, and type-checks its Worker", async () => {
    const page = await readFile(join(host, 'node_modules', PACKAGE, 'docs', 'moving-a-host.md'), 'utf8');
    const snippets = typeScriptSnippets(page);
    const run = snippets.filter((snippet) => !snippet.typeCheckOnly);
    expect(run.length).toBeGreaterThanOrEqual(2);
    expect(snippets.some((snippet) => snippet.typeCheckOnly)).toBe(true);
    const outputs = await compileAndRun(
      host,
      'host',
      snippets.map((snippet) => snippet.source),
      // Upstream's own declarations reach cloudflare:workers and packages a host may not have.
      { skipLibCheck: true, types: ['node'] },
      ['--import', `${PACKAGE}/register`],
      {},
      snippets.map((snippet) => !snippet.typeCheckOnly),
    );
    snippets.forEach((snippet, index) => {
      if (snippet.typeCheckOnly) return;
      expect(snippet.prints, `snippet ${index + 1} says what it prints`).toBeDefined();
      expect(outputs[index]?.trim(), `docs/moving-a-host.md snippet ${index + 1}`).toBe(snippet.prints?.trim());
    });
  });

  it.concurrent("type-checks docs/durable-state.md's typed runtime host under TypeScript 5.9 and 7, skipLibCheck off, and runs it", async () => {
    const page = await readFile(join(host, 'node_modules', PACKAGE, 'docs', 'durable-state.md'), 'utf8');
    const files = namedFiles(page);
    expect(files.map((file) => file.name)).toEqual(['tsconfig.json', 'workers-runtime.d.ts', 'host.ts']);
    const project = join(host, 'typed');
    await mkdir(project);
    for (const file of files) await writeFile(join(project, file.name), file.body);
    const { compilerOptions } = JSON.parse(files[0]!.body) as { compilerOptions: Record<string, unknown> };
    expect(compilerOptions.skipLibCheck).toBe(false);
    for (const { tsc: compiler } of TYPESCRIPTS) await run(process.execPath, [compiler, '-p', '.'], project);
    const hostFile = files[2]!;
    const printed = await run(process.execPath, ['--import', `${PACKAGE}/register`, 'out/host.js'], project);
    expect(hostFile.prints).toBeDefined();
    expect(printed.trim()).toBe(hostFile.prints?.trim());
    // The cast is needed: the state's type is a subset of DurableObjectState.
    const cast = 'state as unknown as DurableObjectState';
    expect(hostFile.body).toContain(cast);
    await writeFile(join(project, 'host.ts'), hostFile.body.replace(cast, 'state'));
    // TypeScript 7 says it as 5.9 does (both checked the file above), in a tenth of the time.
    await expect(run(process.execPath, [TYPESCRIPTS[1]!.tsc, '-p', '.', '--noEmit'], project)).rejects.toThrow(
      /host\.ts\(\d+,\d+\): error TS2740: Type 'DurableState' is missing the following properties from type 'DurableObjectState/,
    );
    // Two checks of upstream's, the AI SDK's and the Workers declarations under 5.9, about 20 s each
    // on a loaded two-core machine, and two under 7: a bound for a hang, not for speed.
  }, 300_000);

  it("runs docs/moving-a-host.md's Worker under workerd, without nodejs_compat, against a daemon", async () => {
    const page = await readFile(join(host, 'node_modules', PACKAGE, 'docs', 'moving-a-host.md'), 'utf8');
    const worker = typeScriptSnippets(page).find((snippet) => snippet.typeCheckOnly);
    if (!worker) throw new Error('docs/moving-a-host.md shows no Worker');
    await writeFile(join(host, 'worker-snippet.ts'), worker.source);
    // Bundled from the installed package the way a Worker project bundles it.
    const bundle = await bundleWorker('worker-snippet.ts', host);
    const project = join(dir, 'worker');
    await mkdir(project);
    await writeFile(join(project, 'worker.js'), bundle.code);
    await writeFile(join(project, 'config.capnp'), WORKER_CONFIG);
    // No token: a Worker's WebSocket sends no headers, so its daemon is reached without one.
    const daemon = await startDaemon(
      host,
      'node node_modules/.bin/codemode-executor serve --port 0 --max-workers 1 --spare 0',
      {
        CODEMODE_EXECUTOR_TOKEN: '',
      },
    );
    try {
      const call = { code: 'async () => codemode.add({ a: 20, b: 22 })' };
      await writeFile(
        join(project, 'main.js'),
        `import worker from './worker.js';
export default {
  async test() {
    const request = new Request('http://worker/', { method: 'POST', body: ${JSON.stringify(JSON.stringify(call))} });
    const response = await worker.fetch(request, { CODEMODE_EXECUTOR_URL: ${JSON.stringify(daemon.url)} });
    console.log('ANSWER ' + (await response.text()));
  },
};
`,
      );
      const printed = await run(WORKERD, ['test', 'config.capnp'], project);
      const answer = printed.split('\n').find((line) => line.startsWith('ANSWER '));
      expect(answer && JSON.parse(answer.slice('ANSWER '.length))).toEqual({ result: 42, logs: [] });
    } finally {
      await daemon.stop();
    }
  });

  it("lets node load upstream through the register subpath, and only through it, as the README's check shows", async () => {
    const readme = await readFile(join(host, 'node_modules', PACKAGE, 'README.md'), 'utf8');
    const check = shellLines(section(readme, 'Install')).find((line) => line.startsWith('node --import '));
    if (!check) throw new Error("The README's Install section shows no check of the register entry");
    expect((await run('sh', ['-c', check], host)).trim()).toBe('upstream loads');
    // Without the entry, Node's own error, which the README names as the sign of it.
    const without = check.replace(`--import ${PACKAGE}/register `, '');
    expect(without).not.toBe(check);
    const quoted = /`\.\.\. (Received protocol '[^']+')`/.exec(section(readme, 'Install'))?.[1];
    expect(quoted).toBeDefined();
    await expect(run('sh', ['-c', without], host)).rejects.toThrow(/ERR_UNSUPPORTED_ESM_URL_SCHEME/);
    await expect(run('sh', ['-c', without], host)).rejects.toThrow(quoted!);
  });
});

interface CompileOptions {
  skipLibCheck: boolean;
  /** The `@types` packages in scope: none, or Node's for a snippet that reads `process`; absent: the default. */
  types?: string[];
  /** Emit JavaScript there, to run it; absent: check only. */
  outDir?: string;
}

function tsconfig(files: string[], { skipLibCheck, types, outDir }: CompileOptions): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      ...(types === undefined ? {} : { types }),
      ...(outDir === undefined ? { noEmit: true } : { outDir, rootDir: '.' }),
      skipLibCheck,
    },
    files,
  });
}

/**
 * Writes each source as `<prefix>-<n>.ts`, compiles them all with one strict tsc run, and runs the
 * ones `runs` marks with node (with `nodeArgs`). Returns each run's stdout (`''` for one not run).
 */
async function compileAndRun(
  project: string,
  prefix: string,
  sources: string[],
  options: Omit<CompileOptions, 'outDir'>,
  nodeArgs: string[],
  env: Record<string, string>,
  runs: boolean[] = sources.map(() => true),
): Promise<string[]> {
  const files = sources.map((_, index) => `${prefix}-${index + 1}.ts`);
  await Promise.all(files.map((file, index) => writeFile(join(project, file), sources[index]!)));
  await writeFile(join(project, `tsconfig.${prefix}.json`), tsconfig(files, { ...options, outDir: `out-${prefix}` }));
  await run(process.execPath, [tsc, '-p', `tsconfig.${prefix}.json`], project);
  const outputs: string[] = [];
  for (const [index, file] of files.entries()) {
    const compiled = join(`out-${prefix}`, file.replace(/\.ts$/, '.js'));
    outputs.push(runs[index] ? await run(process.execPath, [...nodeArgs, compiled], project, env) : '');
  }
  return outputs;
}

/**
 * A daemon started by a shell command line in `project`; it listens on a free port. It runs in a
 * process group of its own, so stopping it reaches npx, the daemon and its workerd.
 */
async function startDaemon(
  project: string,
  command: string,
  env: Record<string, string>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn('sh', ['-c', command], {
    cwd: project,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone already.
      }
      if (signal === 'SIGTERM') await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    }
    await exited;
  };
  let printed = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        printed += chunk.toString('utf8');
        const listening = /listening on (ws:\/\/[^\s"]+)/.exec(printed);
        if (listening) resolve(listening[1]!);
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      void exited.then(() => reject(new Error(`\`${command}\` exited before listening:\n${printed}`)));
    });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The daemon exactly as the README starts it (through npx, in the consumer), on a free port. */
async function startReadmeDaemon(readme: string, token: string): Promise<{ url: string; stop(): Promise<void> }> {
  const command = shellLines(readme).find((line) => line.startsWith('npx codemode-executor serve'));
  if (!command) throw new Error('The README shows no `npx codemode-executor serve` command');
  expect(command).toContain('--port 8787');
  return startDaemon(consumer, command.replace('--port 8787', '--port 0'), { CODEMODE_EXECUTOR_TOKEN: token });
}

/** A Worker's bundle and a `test()` module that calls its fetch handler once, under `workerd test`. */
const WORKER_CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (
      modules = [
        (name = "main.js", esModule = embed "main.js"),
        (name = "worker.js", esModule = embed "worker.js"),
      ],
      compatibilityDate = "2025-06-01",
      globalOutbound = "loopback",
    )),
    (name = "loopback", network = (allow = ["local"])),
  ],
);
`;

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
