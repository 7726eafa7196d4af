/**
 * HAProxy, started by the tests in front of real daemons, with the shipped deploy/haproxy.cfg:
 * the test's config is generated from it with only the listening addresses changed (each to a
 * loopback port of the test's), so what is tested is what ships.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIPPED = fileURLToPath(new URL('../../../deploy/haproxy.cfg', import.meta.url));

/** A free loopback port (there is a small window before HAProxy binds it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Backend {
  port: number;
  adminPort: number;
}

interface Ports {
  frontend: number;
  stats: number;
  backends: Backend[];
}

/**
 * The shipped config with its frontend, its stats page and each `server` line moved to the
 * test's loopback ports. Every other line is kept as it is; a shipped file whose shape changed
 * (another number of servers, a moved bind) fails here rather than testing something else.
 */
function configFor(shipped: string, ports: Ports): string {
  const lines = shipped.split('\n');
  let binds = 0;
  let servers = 0;
  const out = lines.map((line) => {
    const bind = /^(\s*bind )(\S+)(.*)$/.exec(line);
    if (bind) {
      binds += 1;
      const port = binds === 1 ? ports.frontend : ports.stats;
      return `${bind[1]}127.0.0.1:${port}${bind[3]}`;
    }
    const server = /^(\s*server \S+ )\S+(.* port )\d+(.*)$/.exec(line);
    if (server) {
      const backend = ports.backends[servers];
      servers += 1;
      if (backend === undefined)
        throw new Error(`deploy/haproxy.cfg has more servers than the test's ${ports.backends.length}`);
      return `${server[1]}127.0.0.1:${backend.port}${server[2]}${backend.adminPort}${server[3]}`;
    }
    return line;
  });
  if (binds !== 2)
    throw new Error(`deploy/haproxy.cfg has ${binds} bind lines; the test expects the frontend and the stats page`);
  if (servers !== ports.backends.length) {
    throw new Error(`deploy/haproxy.cfg has ${servers} servers; the test runs ${ports.backends.length} daemons`);
  }
  return out.join('\n');
}

export interface RunningHaproxy {
  /** `ws://127.0.0.1:<frontend>` */
  url: string;
  config: string;
  child: ChildProcess;
  /** Server name → HAProxy's status of it (`UP`, `DOWN`, ...), from the stats page's CSV. */
  statuses(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

export async function startHaproxy(backends: Backend[]): Promise<RunningHaproxy> {
  const ports: Ports = { frontend: await freePort(), stats: await freePort(), backends };
  const config = configFor(await readFile(SHIPPED, 'utf8'), ports);
  const dir = await mkdtemp(join(tmpdir(), 'codemode-fleet-haproxy-'));
  const path = join(dir, 'haproxy.cfg');
  await writeFile(path, config);
  // -db: stay in the foreground, so the test owns the process and its exit.
  const child = spawn('haproxy', ['-db', '-f', path], { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = once(child, 'exit');
  const statuses = async (): Promise<Map<string, string>> => {
    const response = await fetch(`http://127.0.0.1:${ports.stats}/stats;csv`);
    const [header, ...rows] = (await response.text()).trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const [svname, status] = [columns.indexOf('svname'), columns.indexOf('status')];
    const result = new Map<string, string>();
    for (const row of rows) {
      const cells = row.split(',');
      if (cells[0] === 'daemons' && !['FRONTEND', 'BACKEND'].includes(cells[svname]!)) {
        result.set(cells[svname]!, cells[status]!);
      }
    }
    return result;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  // The stats page answers once HAProxy has bound its sockets.
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`haproxy exited: ${stderr.join('')}`);
    }
    try {
      await statuses();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { url: `ws://127.0.0.1:${ports.frontend}`, config, child, statuses, stop };
}
