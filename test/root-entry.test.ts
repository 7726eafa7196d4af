/**
 * The root entry must bundle for a Worker without nodejs_compat: its import graph reaches no
 * `node:` module and no Node-only package. Proven three ways: esbuild's metafile for a neutral
 * and a browser bundle, negative controls showing the same build fails on a Node import, and the
 * bundle running under real workerd with no compatibility flags.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const entry = join(root, 'src', 'index.ts');

/** Packages the root entry may reach: runtime-neutral ones only (capnweb is the remote client's transport; lru-cache holds the dialect's normalized code; leven measures the did-you-mean of an unknown option; valibot parses the option schemas). */
const NEUTRAL_PACKAGES = new Set(['acorn', 'capnweb', 'leven', 'lru-cache', 'valibot']);
/** Node-only packages, named so a failure says which one slipped in. */
const NODE_ONLY_PACKAGES = ['ws', 'workerd', '@cloudflare/workerd-linux-64'];

/** No externals and no node built-ins declared: a Node import fails the build instead of being left out. */
function options(platform: 'neutral' | 'browser'): BuildOptions {
  return {
    bundle: true,
    write: false,
    format: 'esm',
    platform,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
  };
}

function packageOf(input: string): string | null {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match ? match[1]! : null;
}

function reachedPackages(metafile: Metafile): Set<string> {
  return new Set(
    Object.keys(metafile.inputs)
      .map(packageOf)
      .filter((name): name is string => name !== null),
  );
}

function everyImportPath(metafile: Metafile): string[] {
  return Object.values(metafile.inputs).flatMap((input) => input.imports.map((imported) => imported.path));
}

async function buildFailure(contents: string): Promise<string[]> {
  try {
    await build({ ...options('neutral'), stdin: { contents, resolveDir: root, loader: 'ts' } });
  } catch (error) {
    return ((error as { errors?: { text: string }[] }).errors ?? []).map((message) => message.text);
  }
  throw new Error(`Bundling ${JSON.stringify(contents)} succeeded; it was expected to fail`);
}

describe.each(['neutral', 'browser'] as const)('the root entry bundled for platform %s', (platform) => {
  let metafile: Metafile;

  beforeAll(async () => {
    const result = await build({ ...options(platform), entryPoints: [entry] });
    metafile = result.metafile!;
  });

  it('reaches the adapter and the protocol, and acorn', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('src/index.ts');
    expect(inputs).toContain('src/codemode/codemode-executor.ts');
    expect(inputs).toContain('src/protocol/dispatch.ts');
    expect(reachedPackages(metafile)).toContain('acorn');
  });

  it('reaches nothing under src/isolate/, src/server/ or src/register/ (the Node-only subpath entries)', () => {
    const inputs = Object.keys(metafile.inputs);
    // The value codec the remote client shares with IsolateExecutor lives in the protocol.
    expect(inputs).toContain('src/protocol/value-codec.ts');
    expect(inputs.filter((input) => /^src\/(isolate|server|register)\//.test(input))).toEqual([]);
  });

  it('reaches no node: module and leaves nothing external', () => {
    expect(everyImportPath(metafile).filter((path) => path.startsWith('node:'))).toEqual([]);
    const external = Object.values(metafile.inputs).flatMap((input) =>
      input.imports.filter((imported) => imported.external),
    );
    expect(external).toEqual([]);
  });

  it('reaches no Node-only package', () => {
    const reached = reachedPackages(metafile);
    for (const name of NODE_ONLY_PACKAGES) expect(reached.has(name), name).toBe(false);
    expect([...reached].filter((name) => !NEUTRAL_PACKAGES.has(name))).toEqual([]);
  });
});

describe('the same build refuses a Node import (negative controls)', () => {
  it('fails on a node: built-in next to the root entry', async () => {
    expect(await buildFailure(`import 'node:fs'; export * from ${JSON.stringify(entry)};`)).toContain(
      'Could not resolve "node:fs"',
    );
  });

  it('fails on the register entry, which is Node-only', async () => {
    const errors = await buildFailure(`import ${JSON.stringify(join(root, 'src', 'register', 'index.ts'))};`);
    expect(errors).toContain('Could not resolve "node:module"');
  });

  it('fails on ws, a Node-only package', async () => {
    const errors = await buildFailure("import 'ws';");
    expect(errors.some((text) => /^Could not resolve "(http|net|tls|stream|crypto|events)"$/.test(text))).toBe(true);
  });
});

describe('the root entry under workerd without nodejs_compat', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'root-entry-workerd-'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loads and runs the adapter in a Worker', async () => {
    const result = await build({ ...options('neutral'), entryPoints: [entry] });
    await writeFile(join(dir, 'root-entry.js'), result.outputFiles![0]!.text);
    await writeFile(join(dir, 'main.js'), WORKER_TEST);
    await writeFile(join(dir, 'config.capnp'), WORKERD_CONFIG);
    const workerd = join(root, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
    // `workerd test` runs the worker's test() handler and exits: nothing is left running.
    const { stdout, stderr } = await promisify(execFile)(workerd, ['test', join(dir, 'config.capnp')], {
      timeout: 60_000,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`workerd test failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(`${stdout}${stderr}`).toContain('[ PASS ] main');
  });
});

/** No compatibilityFlags: nodejs_compat is off, so any `node:` import would fail to load. */
const WORKERD_CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
);

const mainWorker :Workerd.Worker = (
  modules = [
    (name = "main.js", esModule = embed "main.js"),
    (name = "root-entry.js", esModule = embed "root-entry.js"),
  ],
  compatibilityDate = "2025-06-01",
);
`;

/** The adapter over a native executor that answers from inside the Worker through the real dispatch. */
const WORKER_TEST = `import { CodemodeExecutor, normalizeCode, replay, sanitizeToolName } from './root-entry.js';

function check(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(what + ': expected ' + JSON.stringify(expected) + ', got ' + JSON.stringify(actual));
  }
}

export default {
  async test() {
    check(typeof globalThis.process, 'undefined', 'no Node process global');
    check(normalizeCode('const a = 40\\na + 2'), 'async () => {\\nconst a = 40\\nreturn (a + 2)\\n}', 'normalizeCode');
    check(sanitizeToolName('list-issues'), 'list_issues', 'sanitizeToolName');
    const native = {
      async execute(request) {
        const envelope = JSON.parse(await request.dispatch('codemode', 'add', '[20,22]'));
        return { result: envelope.result, logs: [{ level: 'warn', message: request.code }] };
      },
      async invokeHandle() { throw new Error('unused'); },
      async closeHandles() {},
      async dispose() {},
    };
    const executor = new CodemodeExecutor(native);
    const outcome = await executor.execute('6 * 7', [{ name: 'codemode', fns: { add: (a, b) => a + b } }]);
    check(outcome, { result: 42, logs: ['[warn] async () => {\\nreturn (6 * 7)\\n}'] }, 'execute');
    // A run record and its replay: the recorder's clock and byte count need nothing of Node.
    const recorded = await executor.execute('6 * 7', [{ name: 'codemode', fns: { add: (a, b) => a + b } }], { record: true });
    check(recorded.record.calls.map((c) => [c.tool, c.args, c.result]), [['add', [20, 22], 42]], 'record');
    check((await replay(recorded.record, { executor: native })).identical, true, 'replay');
  },
};
`;
