/**
 * The daemon's life: its admin listener (health, readiness, metrics), the drain timeout, and a stop
 * when the process that started it goes away, tried through `npx codemode-executor serve` exactly
 * as the README starts it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type Executor, ExecutorError } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { createExecutorServer } from '../../src/server/index.js';
import { NodeWebSocket, rejection, toolGate } from '../support/client.js';
import { adminGet, metricValue, startAdminDaemon, stopAllDaemons } from '../support/daemon.js';
import { isAlive, waitFor, workerdDescendants } from '../support/processes.js';

afterAll(stopAllDaemons);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TRIVIAL = { code: 'async () => 42' };

describe('the admin listener', () => {
  it('answers /healthz, /readyz once a sandbox started, /metrics, and nothing else', async () => {
    const daemon = await startAdminDaemon();
    expect(await adminGet(daemon, '/healthz')).toEqual({ status: 200, body: 'alive\n' });
    for (;;) {
      const ready = await adminGet(daemon, '/readyz');
      if (ready.status === 200) {
        expect(ready.body).toBe('ready: taking new sessions\n');
        break;
      }
      expect(ready).toEqual({ status: 503, body: 'not ready: the first sandbox has not started yet\n' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    await executor.execute(TRIVIAL);
    await executor.dispose();
    expect(await metricValue(daemon, 'codemode_executor_executions_total{kind="execute",outcome="ok"}')).toBe(1);
    expect(await metricValue(daemon, 'codemode_executor_sessions_opened_total')).toBe(1);
    expect(await adminGet(daemon, '/other')).toEqual({
      status: 404,
      body: 'The admin listener serves GET /healthz, /readyz and /metrics\n',
    });
    expect(new URL(daemon.adminUrl).hostname).toBe('127.0.0.1');
  });

  it('/readyz is 503, saying why, while the executor cannot start a sandbox, and 200 once it can', async () => {
    let broken = true;
    const executor: Executor = {
      execute: async () => {
        if (broken) throw new ExecutorError('SANDBOX_UNAVAILABLE', 'workerd could not start: exec format error');
        return { result: 1, logs: [] };
      },
      invokeHandle: async () => ({ logs: [] }),
      closeHandles: async () => {},
      dispose: async () => {},
    };
    const server = await createExecutorServer({ executor, port: 0, admin: { port: 0 } });
    try {
      const readyz = async () => {
        const response = await fetch(`${server.adminUrl}/readyz`);
        return { status: response.status, body: await response.text() };
      };
      for (;;) {
        const state = await readyz();
        if (state.body !== 'not ready: the first sandbox has not started yet\n') {
          expect(state).toEqual({
            status: 503,
            body: 'not ready: the executor cannot start a sandbox: workerd could not start: exec format error\n',
          });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      broken = false;
      // A client's successful execution shows the sandbox works again.
      const client = await connect(server.url, { websocket: NodeWebSocket });
      await expect(client.execute(TRIVIAL)).resolves.toMatchObject({ result: 1 });
      await client.dispose();
      expect(await readyz()).toEqual({ status: 200, body: 'ready: taking new sessions\n' });
    } finally {
      await server.close();
    }
  });
});

describe('--drain-timeout-ms', () => {
  it('cancels what still runs when it passes, logs it, and exits 0', async () => {
    const daemon = await startAdminDaemon(['--drain-timeout-ms', '300']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const gate = toolGate();
    const running = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    daemon.kill('SIGTERM');
    const error = await rejection(running);
    // The caller passed no signal: it is told the daemon stopped, not that its signal was aborted.
    expect([error.code, error.message]).toEqual([
      'EXECUTION_CANCELLED',
      "The daemon stopped, and this execute call's run was cancelled after the daemon's drain timeout of 300 ms passed (--drain-timeout-ms).",
    ]);
    expect(daemon.lines).toContain(
      'the drain timeout of 300 ms passed (--drain-timeout-ms) with 1 execution still running: cancelling it',
    );
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    gate.open();
    await executor.dispose();
  });
});

describe('a stop past the drain timeout', () => {
  it('ends even when the executor ignores the cancel, and the caller is told', async () => {
    let started!: () => void;
    const reached = new Promise<void>((resolve) => (started = resolve));
    const deaf: Executor = {
      // Never settles and never looks at its signal, as a broken executor would.
      execute: () => {
        started();
        return new Promise(() => {});
      },
      invokeHandle: async () => ({ logs: [] }),
      closeHandles: async () => {},
      dispose: async () => {},
    };
    const lines: string[] = [];
    const server = await createExecutorServer({
      executor: deaf,
      port: 0,
      drainTimeoutMs: 100,
      log: (line) => void lines.push(line),
    });
    const client = await connect(server.url, { websocket: NodeWebSocket, reconnect: false });
    const outcome = rejection(client.execute(TRIVIAL));
    await reached;
    await server.close();
    expect(lines).toContain(
      'the drain timeout of 100 ms passed (--drain-timeout-ms) with 1 execution still running: cancelling it',
    );
    // The executor never answered, so no answer was sent: the client learns the session broke.
    expect((await outcome).code).toBe('CONNECTION_BROKEN');
    await client.dispose();
  });
});

/** The pids under `ancestor`, walking /proc. */
function descendants(ancestor: number): { pid: number; args: string }[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: { pid: number; args: string }[] = [];
  for (const pid of parents.keys()) {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) {
      if (at !== ancestor) continue;
      try {
        found.push({ pid, args: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') });
      } catch {
        // Gone meanwhile.
      }
      break;
    }
  }
  return found;
}

describe('wrapped by npx, as the README starts it', () => {
  // npx runs the built bin (dist/): `npm test` builds first.
  it('stops as on SIGTERM when npx is SIGTERMed and exits, leaving nothing running', async () => {
    const npx = spawn(
      'npx',
      ['--no-install', 'codemode-executor', 'serve', '--port', '0', '--max-workers', '1', '--spare', '0'],
      {
        cwd: ROOT,
        env: { ...process.env, CODEMODE_EXECUTOR_TOKEN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const npxExited = once(npx, 'exit');
    const lines: string[] = [];
    let buffer = '';
    npx.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      lines.push(...parts);
    });
    let daemonPid: number | undefined;
    try {
      await waitFor(() => lines.some((line) => / listening on ws:/.test(line)), 'the daemon to listen', 60_000);
      const url = /listening on (\S+)/.exec(lines.find((line) => / listening on ws:/.test(line))!)![1]!;
      const daemon = descendants(npx.pid!).find(({ args }) => /node .*codemode-executor serve/.test(args));
      expect(daemon).toBeDefined();
      daemonPid = daemon!.pid;
      const executor = await connect(url, { websocket: NodeWebSocket });
      await executor.execute(TRIVIAL);
      await executor.dispose();
      const sandboxes = workerdDescendants(daemonPid);
      expect(sandboxes.length).toBeGreaterThan(0);

      npx.kill('SIGTERM');
      await npxExited;
      await waitFor(() => !isAlive(daemonPid!), 'the orphaned daemon to stop', 30_000);
      for (const pid of sandboxes) await waitFor(() => !isAlive(pid), `sandbox ${pid} to end`);
      expect(
        lines.some((line) => /warn the parent process \(pid \d+\) is gone: shutting down as on SIGTERM/.test(line)),
      ).toBe(true);
      expect(lines.at(-1)).toMatch(/ info stopped$/);
    } finally {
      if (daemonPid !== undefined && isAlive(daemonPid)) process.kill(daemonPid, 'SIGKILL');
      if (npx.exitCode === null && npx.signalCode === null) npx.kill('SIGKILL');
    }
  });
});
