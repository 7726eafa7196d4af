/**
 * Runs test/durable/fixtures/host.ts as its own Node process (the register entry and tsx
 * preloaded, as a host would run), collecting the JSON lines it prints. Every process started
 * here is killed by `killAllHosts` (afterAll).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ARGS = ['--import', 'tsx', '--import', './src/register/index.ts', 'test/durable/fixtures/host.ts'];

const running = new Set<ChildProcess>();

export interface HostProcess {
  readonly child: ChildProcess;
  /** Every JSON line printed so far. */
  readonly lines: unknown[];
  /** Resolves with the first printed line (past or future) for which `match` holds. */
  line(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly stderr: () => string;
}

export interface HostOptions {
  /** Replaces the inherited environment's variables of the same names. */
  env?: Record<string, string>;
  /**
   * A directory the host sees mounted read-only (a mount namespace of its own, so root needs it:
   * root writes through any mode bits, and a host run as another user may not reach the checkout).
   */
  readOnly?: string;
}

/** Runs `command` in a mount namespace of its own where `dir` is bound read-only onto itself. */
const READ_ONLY_MOUNT = 'mount -o bind,ro "$0" "$0" && exec "$@"';

export function startHost(args: string[], { env, readOnly }: HostOptions = {}): HostProcess {
  const command = [process.execPath, ...ARGS, ...args];
  const [file, ...argv] =
    readOnly === undefined
      ? command
      : ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', READ_ONLY_MOUNT, readOnly, ...command];
  const child = spawn(file!, argv, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  running.add(child);
  const lines: Record<string, unknown>[] = [];
  const waiters: { match(line: Record<string, unknown>): boolean; resolve(line: Record<string, unknown>): void }[] = [];
  let stderr = '';
  let buffer = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (!waiter.match(line)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    line(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(({ code, signal }) =>
          reject(new Error(`host exited (${code ?? signal}) before the awaited line; stderr: ${stderr}`)),
        );
      });
    },
  };
}

/** Runs a command to its end and returns its last line. */
export async function runHost(args: string[], options: HostOptions = {}): Promise<Record<string, unknown>> {
  const host = startHost(args, options);
  const { code } = await host.exited;
  if (code !== 0) throw new Error(`host ${args.join(' ')} exited ${code}: ${host.stderr()}`);
  return host.lines.at(-1) as Record<string, unknown>;
}

export async function killAllHosts(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }),
  );
}
