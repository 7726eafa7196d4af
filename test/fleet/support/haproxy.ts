/**
 * HAProxy, started by the tests in front of real daemons, with the shipped deploy/haproxy.cfg:
 * the test's config is generated from it with only the listening addresses changed (each to a
 * loopback port of the test's), so what is tested is what ships.
 */
import { type ChildProcess, spawn } from 'node:child_process';
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

/** What a failed start says: what is missing and how to get it, or what HAProxy said. */
const haproxyTexts = {
  notInstalled: (why: string) =>
    `haproxy is not installed (${why}): the fleet tests run the shipped deploy/haproxy.cfg in a real HAProxy. ` +
    'Install it (Debian and Ubuntu: apt-get install haproxy; .ci/run installs it when missing) and run the tests again.',
  couldNotStart: (why: string) => `haproxy could not be started: ${why}`,
  exited: (status: string, stderr: string) =>
    `haproxy exited before it listened (${status}). Its output:\n${stderr.trim() || '(no output)'}`,
};

export interface RunningHaproxy {
  /** `ws://127.0.0.1:<frontend>` */
  url: string;
  config: string;
  child: ChildProcess;
  /** Server name → HAProxy's status of it (`UP`, `DOWN`, ...), from the stats page's CSV. */
  statuses(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

/** `env` is added to the test's environment (the test of a missing HAProxy gives a PATH without it). */
export async function startHaproxy(backends: Backend[], env: NodeJS.ProcessEnv = {}): Promise<RunningHaproxy> {
  const ports: Ports = { frontend: await freePort(), stats: await freePort(), backends };
  const config = configFor(await readFile(SHIPPED, 'utf8'), ports);
  const dir = await mkdtemp(join(tmpdir(), 'codemode-fleet-haproxy-'));
  const path = join(dir, 'haproxy.cfg');
  await writeFile(path, config);
  // -db: stay in the foreground, so the test owns the process and its exit.
  const child = spawn('haproxy', ['-db', '-f', path], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  // A failed spawn (ENOENT when the PATH has no haproxy) is an 'error' event, never an output line.
  let spawnError: NodeJS.ErrnoException | undefined;
  child.once('error', (error: NodeJS.ErrnoException) => {
    spawnError = error;
  });
  const stderr: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  // Not events.once: it rejects on the 'error' of a failed spawn, which nobody would await.
  const exited = new Promise((resolve) => child.once('exit', resolve));
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
    if (spawnError !== undefined || child.exitCode !== null || child.signalCode !== null) {
      await stop();
      if (spawnError?.code === 'ENOENT') throw new Error(haproxyTexts.notInstalled('no haproxy on the PATH'));
      if (spawnError !== undefined) throw new Error(haproxyTexts.couldNotStart(spawnError.message));
      throw new Error(haproxyTexts.exited(`code ${child.exitCode}, signal ${child.signalCode}`, stderr.join('')));
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
