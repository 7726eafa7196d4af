/**
 * What the pool relies on in the workerd binary, checked against the binary itself, so a workerd
 * release that changes it fails here (docs/isolate.md, "The workerd binary"):
 *
 * - `serve` takes the flags a member starts with (command-line.ts): `--experimental`, `--control-fd`;
 * - the config grammar of the member's config (supervisor-config.ts): services, an inline ES module,
 *   a `workerLoader` binding, a socket on port 0;
 * - the control fd reports the bound port as `{"event":"listen","socket":…,"port":…}`, the one
 *   line control-events.ts parses;
 * - the Worker Loader (`env.LOADER.get(id, callback)`, `getEntrypoint()`) loads and runs code, and
 *   still needs `--experimental`: the day it does not, this says so and the flag can go;
 * - a whole member (IsolateExecutor, unconfined) runs a program.
 *
 * It runs the pinned binary; `CODEMODE_WORKERD_BINARY` runs it against another. The matrix's
 * `ours-workerd-newest` column runs the whole catalogue on the registry's newest release.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { workerdServeArgs } from '../../../../src/isolate/host/confinement/command-line.js';
import { parseControlEvent } from '../../../../src/isolate/host/member/control-events.js';
import { resolveWorkerdBinary } from '../../../../src/isolate/host/member/workerd-binary.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { withSlack } from '../../../support/machine-slack.js';

const BINARY = resolveWorkerdBinary();

/** A worker that loads a dynamic worker through the loader, as the supervisor does, and answers with what it returns. */
const CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .main) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  modules = [ (name = "main.js", esModule = embed "main.js") ],
  compatibilityDate = "2025-06-01",
  bindings = [ (name = "LOADER", workerLoader = ()) ],
);
`;

const MAIN = `export default {
  async fetch(request, env) {
    const worker = env.LOADER.get("contract", () => ({
      compatibilityDate: "2025-06-01",
      mainModule: "loaded.js",
      modules: { "loaded.js": "export default { fetch() { return new Response(String(6 * 7)) } }" },
      globalOutbound: null,
    }));
    return worker.getEntrypoint().fetch(request);
  },
};
`;

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function configDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'workerd-contract-'));
  dirs.push(dir);
  await writeFile(join(dir, 'config.capnp'), CONFIG);
  await writeFile(join(dir, 'main.js'), MAIN);
  return dir;
}

/** A member's own command line (command-line.ts), on this config. */
const MEMBER_ARGS = workerdServeArgs('config.capnp');

/** Starts workerd with `args`; resolves with its control fd's lines once one parses, or its exit and output. */
function serve(dir: string, args: readonly string[]) {
  const child: ChildProcess = spawn(BINARY, args, {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = once(child, 'exit');
  const listening = new Promise<{ port: number; lines: string[] } | { exit: unknown; output: string }>((resolve) => {
    let buffer = '';
    child.stdio[3]!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\n').filter(Boolean);
      for (const line of lines) {
        const event = parseControlEvent(line);
        if (event?.event === 'listen') resolve({ port: event.port, lines });
      }
    });
    void exited.then(([code]) => resolve({ exit: code, output }));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  return { listening, stop };
}

describe.runIf(process.platform === 'linux')('the workerd binary', () => {
  it('takes the serve flags a member starts with', async () => {
    expect(MEMBER_ARGS).toEqual(['serve', '--experimental', 'config.capnp', '--control-fd=3']);
    const { stdout, stderr } = await promisify(execFile)(BINARY, ['serve', '--help'], { timeout: withSlack(30_000) });
    const help = `${stdout}${stderr}`;
    // The help's layout changes between releases (`--control-fd=<fd>`, `--control-fd <fd>`); the flags stay.
    for (const flag of [/--experimental\b/, /--control-fd[= ]<fd>/]) expect(help).toMatch(flag);
  });

  it('reads the config grammar, reports its port on the control fd, and runs code through the Worker Loader', async () => {
    const server = serve(await configDir(), MEMBER_ARGS);
    try {
      const started = await server.listening;
      if (!('port' in started)) throw new Error(`workerd did not listen: ${JSON.stringify(started)}`);
      expect(started.lines.map(parseControlEvent)).toContainEqual({
        event: 'listen',
        socket: 'http',
        port: started.port,
      });
      const response = await fetch(`http://127.0.0.1:${started.port}/`);
      expect(await response.text()).toBe('42');
    } finally {
      await server.stop();
    }
  });

  it('still needs --experimental for the Worker Loader', async () => {
    const server = serve(
      await configDir(),
      MEMBER_ARGS.filter((arg) => arg !== '--experimental'),
    );
    try {
      const started = await server.listening;
      // Listening without the flag means the loader is no longer experimental: drop the flag.
      expect('exit' in started ? started.output : 'listened without --experimental').toMatch(/experimental/i);
    } finally {
      await server.stop();
    }
  });

  it('runs a program in a whole member', async () => {
    const executor = new IsolateExecutor({ confinement: 'off', pool: { maxWorkers: 1, spare: 0 } });
    try {
      expect(
        await executor.execute({ code: 'async () => { await new Promise((r) => setTimeout(r, 1)); return 6 * 7 }' }),
      ).toEqual({
        result: 42,
        logs: [],
      });
    } finally {
      await executor.dispose();
    }
  });
});
