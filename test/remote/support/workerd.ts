/**
 * Runs a bundled Worker under plain workerd (the npm package's binary, no wrangler), with no
 * compatibility flags, allowed to reach loopback alone. Learns its port from the control fd.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
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

export async function runWorker(code: string): Promise<RunningWorker> {
  const dir = await mkdtemp(join(tmpdir(), 'remote-workerd-'));
  await writeFile(join(dir, 'worker.js'), code);
  await writeFile(join(dir, 'config.capnp'), CONFIG);
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
