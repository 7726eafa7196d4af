/**
 * Runs Workers under plain workerd (the npm package's binary, no wrangler), learning the port from
 * the control fd: a bundled Worker with no compatibility flags, allowed to reach loopback alone
 * (`runWorker`), or any config and modules a test writes (`serveWorkerd`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKERD = join(ROOT, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');

/**
 * Bundles for workerd the way a Worker project would: the `workerd` export condition, no Node
 * built-ins. `project` is where packages resolve from: this repository, or an installed host.
 */
export async function bundleWorker(entry: string, project = ROOT): Promise<{ code: string; metafile: Metafile }> {
  const result = await build({
    entryPoints: [join(project, entry)],
    absWorkingDir: project,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['cloudflare:*'],
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}

const CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-06-01",
  globalOutbound = "loopback",
);
`;

export interface RunningWorker {
  url: string;
  stop(): Promise<void>;
}

export function runWorker(code: string): Promise<RunningWorker> {
  return serveWorkerd({ 'config.capnp': CONFIG, 'worker.js': code });
}

/**
 * Serves `files` (a `config.capnp` and the modules it embeds) under workerd, from a directory of
 * their own, until `stop()`; its first socket's URL is the one returned.
 */
export async function serveWorkerd(files: Record<string, string>): Promise<RunningWorker> {
  const dir = await mkdtemp(join(tmpdir(), 'workerd-'));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  const child: ChildProcess = spawn(WORKERD, ['serve', 'config.capnp', '--control-fd=3'], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
  });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let buffer = '';
      child.stdio[3]!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        for (const line of buffer.split('\n')) {
          const event = /"event":"listen".*"port":(\d+)/.exec(line);
          if (event) resolve(Number(event[1]));
        }
      });
      void exited.then(([code]) => reject(new Error(`workerd exited with ${String(code)} before listening`)));
    });
    return { url: `http://127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
