/**
 * The daemon process: authentication in the handshake, the loopback rule, the version handshake,
 * its bounds (message size, executions per connection, the pool queue) and the graceful stop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createEnvelopeDispatch, PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { formatNotTakingSessions, formatTokenMissing, formatTokenWrong } from '../../src/remote/texts.js';
import { TOKEN_MISSING, TOKEN_WRONG } from '../../src/server/texts.js';
import { DRAINING_REFUSAL } from '../../src/wire/texts.js';
import { NodeWebSocket, rejection, toolGate } from '../support/client.js';
import { spawnDaemon, startDaemon, startMismatchDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';

afterAll(stopAllDaemons);

const TRIVIAL = { code: 'async () => 42' };
/** Two sandbox processes, for tests that hold one execution open while another runs. */
const TWO_AT_ONCE = ['--max-workers', '2'];

describe('the bearer token', () => {
  it('admits the right token and refuses a wrong or missing one before any RPC', async () => {
    const daemon = await startDaemon([], { env: { CODEMODE_EXECUTOR_TOKEN: 'from-the-env' } });
    // No --host: the daemon binds loopback.
    expect(daemon.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const admitted = await connect(daemon.url, { websocket: NodeWebSocket, token: 'from-the-env' });
    await expect(admitted.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await admitted.dispose();

    const refusals = [
      { options: { token: 'wrong' }, client: formatTokenWrong(daemon.url), logged: TOKEN_WRONG },
      {
        options: { headers: { authorization: 'Basic from-the-env' } },
        client: formatTokenMissing(daemon.url),
        logged: TOKEN_MISSING,
      },
      { options: {}, client: formatTokenMissing(daemon.url), logged: TOKEN_MISSING },
    ];
    for (const { options, client } of refusals) {
      const error = await rejection(connect(daemon.url, { websocket: NodeWebSocket, ...options }));
      expect([error.code, error.message, error.retryable]).toEqual(['CONNECTION_REJECTED', client, false]);
    }
    // The daemon's log says which of the two it was, one line per refusal.
    const refused = (text: string) =>
      daemon.lines.filter(
        (line) => line.startsWith('connection refused from 127.0.0.1:') && line.endsWith(`: ${text}`),
      );
    await waitUntil(() => refused(TOKEN_WRONG).length === 1 && refused(TOKEN_MISSING).length === 2);
    expect(daemon.lines.filter((line) => / opened from /.test(line))).toHaveLength(1);
  });

  it('takes --token over the environment', async () => {
    const daemon = await startDaemon(['--token', 'from-the-flag'], {
      env: { CODEMODE_EXECUTOR_TOKEN: 'from-the-env' },
    });
    expect((await rejection(connect(daemon.url, { websocket: NodeWebSocket, token: 'from-the-env' }))).code).toBe(
      'CONNECTION_REJECTED',
    );
    const admitted = await connect(daemon.url, { websocket: NodeWebSocket, token: 'from-the-flag' });
    await admitted.dispose();
  });

  it('is required to bind a non-loopback address', async () => {
    const daemon = spawnDaemon(['--host', '0.0.0.0', '--port', '0']);
    const { code } = await daemon.exited;
    expect(code).toBe(1);
    expect(daemon.stderr.join('')).toContain(
      'Refusing to bind 0.0.0.0 without a token: a non-loopback address needs --token or the CODEMODE_EXECUTOR_TOKEN environment variable',
    );
    expect(daemon.lines).toEqual([]);
  });
});

describe('the command line', () => {
  it('refuses an unknown flag, naming it, with status 2', async () => {
    const daemon = spawnDaemon(['--frobnicate']);
    expect((await daemon.exited).code).toBe(2);
    expect(daemon.stderr.join('')).toContain(
      'codemode-executor: unknown flag --frobnicate; codemode-executor --help lists the flags',
    );
  });

  it('refuses a flag without its value, and crossed timeouts, naming the flags', async () => {
    const cases: [string[], string][] = [
      [['--port'], 'codemode-executor: --port needs a value'],
      [
        ['--timeout', '10', '--max-timeout', '5'],
        'codemode-executor: --timeout (10 ms) is above --max-timeout (5 ms): a request',
      ],
      [['--max-timeout', '5'], 'codemode-executor: the default --timeout (60000 ms) is above --max-timeout (5 ms)'],
      [['--log-format', 'xml'], 'codemode-executor: --log-format must be text or json, got "xml"'],
      [['--admin-port', '70000'], 'codemode-executor: --admin-port must be from 0 to 65535, got 70000'],
      [['--admin-host', '0.0.0.0'], 'codemode-executor: --admin-host needs --admin-port'],
    ];
    // Each process only reads its flags and exits: side by side, not one after another.
    const daemons = cases.map(([args]) => spawnDaemon(args));
    for (const [index, [, text]] of cases.entries()) {
      const daemon = daemons[index]!;
      expect((await daemon.exited).code).toBe(2);
      expect(daemon.stderr.join('')).toContain(text);
    }
  });

  it('prints a usage error as one line that points to --help, not the whole help', async () => {
    const daemon = spawnDaemon(['--port', '-1']);
    expect((await daemon.exited).code).toBe(2);
    expect(daemon.stderr.join('')).toBe(
      'codemode-executor: --port must be from 0 to 65535, got -1; codemode-executor --help lists the flags\n',
    );
    expect(daemon.lines).toEqual([]);
  });

  it('prints its version and its wire protocol with --version, and exits 0', async () => {
    const daemon = spawnDaemon(['--version']);
    expect((await daemon.exited).code).toBe(0);
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(daemon.lines).toEqual([`codemode-executor ${manifest.version} (protocol ${PROTOCOL_VERSION})`]);
  });

  it('--help shows every default, and no path an installed user cannot open', async () => {
    const daemon = spawnDaemon(['--help']);
    expect((await daemon.exited).code).toBe(0);
    const help = daemon.lines.join('\n');
    // Each flag's entry (its line and the ones continuing it) states its default.
    const entries = help.split(/\n(?= {2}-)/).filter((entry) => entry.startsWith('  --'));
    expect(entries.length).toBeGreaterThan(20);
    for (const entry of entries) expect(entry).toMatch(/\(default/);
    expect(help).not.toMatch(/docs\/|\.md\b/);
  });

  it('logs as JSON with --log-format json: one object per line, with time and level', async () => {
    const daemon = await startDaemon(['--log-format', 'json']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    await executor.execute(TRIVIAL);
    await executor.dispose();
    await daemon.waitForLine(/^connection 1 closed after 1 execution$/);
    for (const line of daemon.raw) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(parsed)).toEqual(['time', 'level', 'msg']);
      expect(Number.isNaN(Date.parse(parsed.time as string))).toBe(false);
    }
    expect(JSON.parse(daemon.raw[0]!)).toMatchObject({
      level: 'info',
      msg: daemon.url && `listening on ${daemon.url}`,
    });
  });

  it('refuses a malformed number, naming the flag', async () => {
    const daemon = spawnDaemon(['--max-workers', 'many']);
    expect((await daemon.exited).code).toBe(2);
    expect(daemon.stderr.join('')).toContain('codemode-executor: --max-workers must be an integer >= 1, got "many"');
  });
});

describe('the version handshake', () => {
  it('refuses a daemon that speaks another version with PROTOCOL_MISMATCH', async () => {
    const daemon = await startMismatchDaemon();
    const error = await rejection(connect(daemon.url, { websocket: NodeWebSocket }));
    expect(error.code).toBe('PROTOCOL_MISMATCH');
    expect(error.message).toBe('Executor protocol mismatch: client speaks v1, server speaks v2');
    // The mismatched session is disposed at once.
    await daemon.waitForLine(/^connection 1 closed after 0 executions$/);
  });
});

describe('bounds', () => {
  it('fails a message over --max-message-bytes alone with LIMIT_EXCEEDED, and the connection lives on', async () => {
    const daemon = await startDaemon(['--max-message-bytes', '100000']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const padding = `/*${'x'.repeat(150_000)}*/`;
    const error = await rejection(executor.execute({ code: `async () => 1 ${padding}` }));
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toMatch(
      /^A message of \d+ bytes exceeds the executor daemon's limit of 100000 bytes \(--max-message-bytes\)$/,
    );
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    expect(daemon.lines.filter((line) => / opened from /.test(line))).toHaveLength(1);
    await executor.dispose();
  });

  it('refuses an execution past --max-executions-per-connection with LIMIT_EXCEEDED', async () => {
    const daemon = await startDaemon(['--max-executions-per-connection', '1', ...TWO_AT_ONCE]);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const gate = toolGate();
    const first = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    const error = await rejection(executor.execute(TRIVIAL));
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toBe(
      "This connection already runs 1 execution, the executor daemon's per-connection limit (--max-executions-per-connection)",
    );
    // Another connection has its own bound.
    const other = await connect(daemon.url, { websocket: NodeWebSocket });
    await expect(other.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    gate.open();
    await expect(first).resolves.toMatchObject({ result: 'released' });
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await Promise.all([executor.dispose(), other.dispose()]);
  });

  it('by default lets one connection carry an agent host: 100 programs waiting on a tool at once', async () => {
    // Two sandbox processes serve them in turn: the pool's queue holds the rest, not the connection.
    const daemon = await startDaemon(['--max-workers', '2']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const dispatch = createEnvelopeDispatch(
      { api: async (_tool, [n]) => new Promise((resolve) => setTimeout(() => resolve(n), 20)) },
      { active: true },
    );
    const programs = Array.from({ length: 100 }, (_, n) =>
      executor.execute({
        code: `async () => (await api.echo(${n})) + 1`,
        providers: [{ name: 'api', tools: ['echo'] }],
        dispatch,
      }),
    );
    const outcomes = await Promise.all(programs);
    expect(outcomes.map((outcome) => outcome.result)).toEqual(Array.from({ length: 100 }, (_, n) => n + 1));
    await executor.dispose();
  });
});

describe('the pool queue bound', () => {
  it('refuses an execution past --max-queue with QUEUE_FULL, and the daemon stays up', async () => {
    const daemon = await startDaemon(['--max-workers', '1', '--max-queue', '0']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const gate = toolGate();
    const first = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    const error = await rejection(executor.execute(TRIVIAL));
    expect(error.code).toBe('QUEUE_FULL');
    expect(error.message).toMatch(/^The IsolateExecutor queue is full: 0 executions are already waiting/);
    gate.open();
    await expect(first).resolves.toMatchObject({ result: 'released' });
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await executor.dispose();
  });
});

describe('a tool answer over --max-message-bytes', () => {
  it('fails that tool call alone, as an error the program reads', async () => {
    const daemon = await startDaemon(['--max-message-bytes', '100000']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const dispatch = createEnvelopeDispatch({ big: () => 'x'.repeat(150_000) }, { active: true });
    const { result } = await executor.execute({
      code: 'async () => { try { return (await big.get()).length } catch (e) { return e.message } }',
      providers: [{ name: 'big', tools: ['get'] }],
      dispatch,
    });
    expect(result).toMatch(
      /^A message of \d+ bytes exceeds the executor daemon's limit of 100000 bytes \(--max-message-bytes\)$/,
    );
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await executor.dispose();
  });
});

describe('a client that goes away mid-execution', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));

  /** Starts the doomed client and resolves once its execution is running in the sandbox. */
  async function doomedClient(url: string): Promise<{ client: ChildProcess; exited: Promise<unknown> }> {
    const client = spawn(process.execPath, ['--import', 'tsx', 'test/server/fixtures/doomed-client.ts', url], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(client, 'exit');
    await new Promise<void>((resolve) =>
      client.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('in flight') && resolve()),
    );
    return { client, exited };
  }

  /** The pool's only process ran the vanished client's execution; this call needs it back. */
  async function poolServesAgain(url: string): Promise<void> {
    const executor = await connect(url, { websocket: NodeWebSocket });
    await expect(executor.execute(TRIVIAL)).resolves.toMatchObject({ result: 42 });
    await executor.dispose();
  }

  it('killed: its execution is cancelled and its sandbox process released', async () => {
    const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
    const { client, exited } = await doomedClient(daemon.url);
    client.kill('SIGKILL');
    await exited;
    await daemon.waitForLine(/^connection 1 execute 1 cancelled: the client is gone$/);
    await daemon.waitForLine(/^connection 1 closed after 1 execution$/);
    await poolServesAgain(daemon.url);
  });

  it('frozen (SIGSTOP): the missed WebSocket ping drops it, with the same cancellation', async () => {
    const daemon = await startDaemon(['--max-workers', '1', '--spare', '0', '--client-ping-interval-ms', '200']);
    const { client, exited } = await doomedClient(daemon.url);
    client.kill('SIGSTOP');
    try {
      await daemon.waitForLine(/^connection 1 execute 1 cancelled: the client is gone$/);
      await daemon.waitForLine(/^connection 1 closed after 1 execution$/);
      await poolServesAgain(daemon.url);
    } finally {
      client.kill('SIGKILL');
      await exited;
    }
  });
});

describe('SIGTERM', () => {
  it('drains running executions, refuses new ones and new connections, then exits', async () => {
    const daemon = await startDaemon();
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const gate = toolGate();
    const running = executor.execute({ code: gate.code, providers: [gate.provider], dispatch: gate.dispatch });
    await gate.reached;
    daemon.kill('SIGTERM');
    await daemon.waitForLine(/^shutting down: draining 1 running execution$/);

    // A new execution is refused before it runs; the client leaves the session and tries to open
    // another, which a lone draining daemon refuses too (behind a load balancer, another takes it).
    const refused = await rejection(executor.execute(TRIVIAL));
    expect([refused.code, refused.message, refused.retryable]).toEqual([
      'CONNECTION_REJECTED',
      formatNotTakingSessions(daemon.url),
      true,
    ]);
    await daemon.waitForLine(new RegExp(`^connection 1 refused execute: ${DRAINING_REFUSAL}$`));
    await daemon.waitForLine(
      /^connection refused from 127\.0\.0\.1:\d+: the daemon is shutting down and opens no new sessions/,
    );
    expect((await rejection(connect(daemon.url, { websocket: NodeWebSocket }))).message).toBe(
      formatNotTakingSessions(daemon.url),
    );

    gate.open();
    await expect(running).resolves.toMatchObject({ result: 'released' });
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.lines.at(-1)).toBe('stopped');
    await executor.dispose();
  });
});
