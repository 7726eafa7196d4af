/**
 * One `wrangler dev` process: started on free ports, waited for until it prints its
 * `Ready on http://...` line, and stopped with its whole process tree. Node-only.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { wranglerExitedEarly, wranglerNotReady } from './messages.js';
import { stopGroup, trackGroup } from './process-group.js';

export interface WranglerDevOptions {
  /** Names the process in error messages (the column name). */
  label: string;
  wranglerBin: string;
  configPath: string;
  /** How long a cold start may take before it is an error. */
  readyTimeoutMs: number;
}

export interface WranglerDev {
  url: string;
  /** The process group wrangler leads; workerd and esbuild run in it too. */
  processGroup: number;
  /** Everything wrangler printed so far (ANSI stripped, the latest 256 KiB). */
  output(): string;
  stop(): Promise<void>;
}

const READY = /Ready on (http:\/\/\S+)/;
const PORT_TAKEN = /Address already in use/;
const OUTPUT_LIMIT = 256 * 1024;
const START_ATTEMPTS = 3;
/** How much of the output an error message quotes. */
const QUOTED_OUTPUT = 8 * 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC opens every ANSI sequence this strips.
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** No telemetry, no prompts, no colour, no interactive session. */
const QUIET_ENV = {
  CI: 'true',
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
};

class PortTaken extends Error {}

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** `count` distinct free ports: every listener stays open until all are known, so none repeats. */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1) servers.push(await listenOnAnyPort());
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('A loopback listener reported no port');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

async function attempt(options: WranglerDevOptions): Promise<WranglerDev> {
  const [port, inspectorPort] = await freePorts(2);
  const args = [
    'dev',
    '--config',
    options.configPath,
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
    '--show-interactive-dev-session=false',
  ];
  const child = spawn(options.wranglerBin, args, {
    cwd: dirname(options.configPath),
    detached: true, // Leader of its own process group, so workerd and esbuild go down with it.
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its debug logs stay beside the column's other state, not in the user's home.
    env: { ...process.env, ...QUIET_ENV, WRANGLER_LOG_PATH: join(dirname(options.configPath), '.wrangler', 'logs') },
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error(wranglerExitedEarly(options.label, null, null, 'spawn failed'));
  trackGroup(pgid);

  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8').replace(ANSI, '')).slice(-OUTPUT_LIMIT);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopGroup(pgid));

  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(wranglerNotReady(options.label, options.readyTimeoutMs, output.slice(-QUOTED_OUTPUT)))),
        options.readyTimeoutMs,
      );
      const check = () => {
        if (PORT_TAKEN.test(output)) {
          clearTimeout(timer);
          reject(new PortTaken());
          return;
        }
        const ready = READY.exec(output);
        if (ready) {
          clearTimeout(timer);
          resolve(ready[1] as string);
        }
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          PORT_TAKEN.test(output)
            ? new PortTaken()
            : new Error(wranglerExitedEarly(options.label, code, signal, output.slice(-QUOTED_OUTPUT))),
        );
      });
    });
    return { url, processGroup: pgid, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts `wrangler dev`; a port taken between probing and binding is retried on fresh ports. */
export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  for (let i = 1; ; i += 1) {
    try {
      return await attempt(options);
    } catch (error) {
      if (!(error instanceof PortTaken) || i >= START_ATTEMPTS) {
        if (error instanceof PortTaken)
          throw new Error(wranglerExitedEarly(options.label, null, null, 'Address already in use, on every attempt'));
        throw error;
      }
    }
  }
}
