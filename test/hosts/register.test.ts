/**
 * The register entry: with it, every host-facing entry of `@cloudflare/codemode` loads in Node,
 * and the classes it hands upstream behave, for what a Node host does with them, as the Workers
 * runtime's own `cloudflare:workers` does. The runtime's side is measured, under real workerd.
 */
import '../../src/register/index.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfContainedSource } from '../../src/protocol/function-source.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKERD = join(ROOT, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');
const STAND_IN = new URL('../../src/register/cloudflare-workers.js', import.meta.url).href;

/** Every installed release of upstream: the newest and the pinned older lines. */
const RELEASES = ['@cloudflare/codemode', 'codemode-0-2', 'codemode-0-3', 'codemode-0-4'];

/** The host-facing entries of the newest release; `./vite` is a build plugin, not host code. */
const ENTRIES = [
  '@cloudflare/codemode',
  '@cloudflare/codemode/ai',
  '@cloudflare/codemode/mcp',
  '@cloudflare/codemode/tanstack-ai',
  '@cloudflare/codemode/browser',
];

/** Every `import ... from "cloudflare:workers"` statement in a release's dist. */
async function workersImports(release: string): Promise<string[]> {
  const dist = join(ROOT, 'node_modules', release, 'dist');
  const statements: string[] = [];
  for (const file of (await readdir(dist)).filter((name) => name.endsWith('.js'))) {
    const source = await readFile(join(dist, file), 'utf8');
    const found = source.match(/^import [^;\n]* from "cloudflare:workers";?$/gm) ?? [];
    // Any other unescaped mention (a dynamic import, an export from) would be a load this test misses;
    // escaped ones are inside the source of the Worker upstream generates.
    expect(source.match(/(?<!\\)"cloudflare:workers"/g)?.length ?? 0, `${release}/dist/${file}`).toBe(found.length);
    statements.push(...found);
  }
  return statements;
}

describe('the members upstream imports', () => {
  it('are named imports of three classes, in every installed release', async () => {
    const members = new Set<string>();
    for (const release of RELEASES) {
      for (const statement of await workersImports(release)) {
        // A namespace or default import would reach members this test cannot list.
        const named = /^import \{([^}]*)\} from "cloudflare:workers";?$/.exec(statement);
        expect(named, `${release}: ${statement}`).not.toBeNull();
        for (const member of named![1]!.split(',')) members.add(member.trim());
      }
    }
    expect([...members].sort()).toEqual(['DurableObject', 'RpcTarget', 'WorkerEntrypoint']);
  });

  it('are what the stand-in exports, no more', async () => {
    // A JavaScript module with no declarations: read as an untyped namespace.
    const standIn = (await import(STAND_IN)) as Record<string, unknown>;
    expect(Object.keys(standIn).sort()).toEqual(['DurableObject', 'RpcTarget', 'WorkerEntrypoint']);
  });
});

describe('upstream in Node with the register entry', () => {
  it.each(ENTRIES)('loads %s', async (entry) => {
    const loaded = (await import(entry)) as Record<string, unknown>;
    expect(Object.keys(loaded).length).toBeGreaterThan(0);
  });

  /** docs/moving-a-host.md's table: which entries Node refuses without the register entry. */
  const NEEDS_REGISTER: Record<string, boolean> = {
    '@cloudflare/codemode': true,
    '@cloudflare/codemode/ai': true,
    '@cloudflare/codemode/mcp': false,
    '@cloudflare/codemode/tanstack-ai': false,
    '@cloudflare/codemode/browser': false,
  };

  it.each(ENTRIES)(
    'without it, %s loads only if it does not import cloudflare:workers (the control)',
    async (entry) => {
      const load = promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`],
        { cwd: ROOT, timeout: 60_000 },
      );
      if (NEEDS_REGISTER[entry]) {
        await expect(load).rejects.toMatchObject({ stderr: expect.stringContaining('ERR_UNSUPPORTED_ESM_URL_SCHEME') });
      } else {
        await expect(load).resolves.toMatchObject({ stderr: '' });
      }
    },
  );
});

describe('a host started without the register entry', () => {
  it('stops before any of its modules runs, so no code of the host or of this package can name the fix', async () => {
    // A host whose first import is this package's root entry, then a module that would report
    // itself, then upstream's root entry. Node links the whole graph before it evaluates any of
    // it, so the refusal comes first: the README says so, and gives a check instead.
    const dir = await mkdtemp(join(ROOT, '.register-host-'));
    try {
      await writeFile(join(dir, 'first.mjs'), "console.log('a module of the host ran')\n");
      await writeFile(
        join(dir, 'host.mjs'),
        "import '@supolka/cloudflare-codemode-executor'\nimport './first.mjs'\nimport '@cloudflare/codemode'\n",
      );
      const started = promisify(execFile)(process.execPath, [join(dir, 'host.mjs')], { cwd: ROOT, timeout: 60_000 });
      const failure = (await started.then(
        () => expect.unreachable('the host loaded upstream without the register entry'),
        (error: unknown) => error,
      )) as { stdout: string; stderr: string };
      expect(failure.stderr).toContain("Received protocol 'cloudflare:'");
      expect(failure.stdout).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * What a Node host does with the three classes: subclass them, construct a connector with
 * `(ctx, env, ...)` and read `this.ctx` and `this.env`, construct an RPC target. Run once on the
 * classes upstream received in this process, once on workerd's own.
 */
function probe(
  WorkerEntrypoint: new (ctx: unknown, env: unknown) => object,
  DurableObject: new (ctx: unknown, env: unknown) => object,
  RpcTarget: new () => object,
) {
  const ctx = { kind: 'ctx' };
  const env = { kind: 'env' };
  class Connector extends WorkerEntrypoint {
    readonly extra: number;
    constructor(ctx: unknown, env: unknown, extra: number) {
      super(ctx, env);
      this.extra = extra;
    }
    name() {
      return 'github';
    }
  }
  const connector = new Connector(ctx, env, 7) as Connector & { ctx?: unknown; env?: unknown };
  class Dispatcher extends RpcTarget {
    call() {
      return 'called';
    }
  }
  const dispatcher = new Dispatcher();
  class Runtime extends DurableObject {}
  let calledWithoutNew: string;
  try {
    (WorkerEntrypoint as unknown as (ctx: unknown, env: unknown) => unknown)(ctx, env);
    calledWithoutNew = 'returned';
  } catch (error) {
    calledWithoutNew = error instanceof TypeError ? 'TypeError' : 'another error';
  }
  return {
    kinds: [typeof WorkerEntrypoint, typeof DurableObject, typeof RpcTarget],
    connectorOwnProperties: Object.getOwnPropertyNames(connector).sort(),
    connectorKeepsCtxAndEnv: connector.ctx === ctx && connector.env === env,
    connectorIsEntrypoint: connector instanceof WorkerEntrypoint,
    connectorMethod: connector.name(),
    dispatcherOwnProperties: Object.getOwnPropertyNames(dispatcher),
    dispatcherIsTarget: dispatcher instanceof RpcTarget,
    dispatcherMethod: dispatcher.call(),
    runtimeExtendsDurableObject: Object.getPrototypeOf(Runtime) === DurableObject,
    basePrototypeMembers: [WorkerEntrypoint, DurableObject, RpcTarget].map((base) =>
      Object.getOwnPropertyNames(base.prototype),
    ),
    calledWithoutNew,
  };
}

const WORKERD_CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = (modules = [ (name = "probe.js", esModule = embed "probe.js") ], compatibilityDate = "2025-06-01")) ],
);
`;

describe('the stand-in classes, beside workerd’s own', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'register-workerd-'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The probe under `workerd test`, on the runtime's module; it prints its answer and exits. */
  async function probeInWorkerd(): Promise<unknown> {
    const worker = `import { WorkerEntrypoint, DurableObject, RpcTarget } from 'cloudflare:workers';
const probe = ${selfContainedSource(probe)};
export default { async test() { console.log('PROBE ' + JSON.stringify(probe(WorkerEntrypoint, DurableObject, RpcTarget))); } };
`;
    await writeFile(join(dir, 'probe.js'), worker);
    await writeFile(join(dir, 'config.capnp'), WORKERD_CONFIG);
    const { stdout } = await promisify(execFile)(WORKERD, ['test', 'config.capnp'], { cwd: dir, timeout: 60_000 });
    const line = stdout.split('\n').find((printed) => printed.startsWith('PROBE '));
    if (!line) throw new Error(`workerd printed no probe result: ${stdout}`);
    return JSON.parse(line.slice('PROBE '.length));
  }

  it('behave as the runtime’s for what a Node host does with them', async () => {
    const root = await import('@cloudflare/codemode');
    // The classes upstream's own subclasses were built on in this process.
    const received = [root.CodemodeConnector, root.CodemodeRuntime, root.ToolDispatcher].map(
      (subclass) => Object.getPrototypeOf(subclass) as never,
    );
    const inNode = probe(received[0]!, received[1]!, received[2]!);
    expect(inNode).toEqual(await probeInWorkerd());
    expect(inNode.connectorOwnProperties).toEqual(['ctx', 'env', 'extra']);
  });
});
