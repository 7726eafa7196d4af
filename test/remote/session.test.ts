/**
 * One daemon, many calls: opening a session, what crosses (tool calls, logs, results the value
 * codec carries, outbound fetch), the options on the wire, and error rehydration.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createEnvelopeDispatch, HANDLE_KEY } from '../../src/protocol/index.js';
import { formatRenamedOption } from '../../src/protocol/texts.js';
import { resolveConnectOptions } from '../../src/remote/connect-options.js';
import { connect, RemoteExecutor, type RemoteExecutor as RemoteExecutorType } from '../../src/remote/index.js';
import { NodeWebSocket, rejection } from '../support/client.js';
import { type Daemon, startDaemon, stopAllDaemons } from '../support/daemon.js';

let daemon: Daemon;
let executor: RemoteExecutorType;

beforeAll(async () => {
  daemon = await startDaemon();
  executor = await connect(daemon.url, { websocket: NodeWebSocket });
});

afterAll(async () => {
  await executor?.dispose();
  await stopAllDaemons();
});

describe('opening a session', () => {
  it('refuses headers without an injected websocket, before opening anything', async () => {
    const error = await rejection(connect(daemon.url, { headers: { authorization: 'Bearer x' } }));
    expect(error.code).toBe('CONNECTION_REJECTED');
    expect(error.message).toBe(
      "options.headers needs options.websocket: the standard WebSocket constructor cannot send headers. Pass a constructor that accepts (url, { headers }), such as the ws package's WebSocket.",
    );
  });

  it('refuses a token without an injected websocket, naming the token', async () => {
    const error = await rejection(connect(daemon.url, { token: 'secret' }));
    expect([error.code, error.message]).toEqual([
      'CONNECTION_REJECTED',
      'options.token needs options.websocket: the standard WebSocket constructor cannot send headers (the token is sent as the authorization header). ' +
        "Pass a constructor that accepts (url, { headers }), such as the ws package's WebSocket.",
    ]);
    const both = await rejection(connect(daemon.url, { token: 'secret', headers: { 'x-team': 'a' } }));
    expect(both.message).toMatch(/^options\.token and options\.headers need options\.websocket: /);
  });

  it('refuses a token that holds a line break, as one read from a file does, naming the token and not showing it', async () => {
    const secret = 'c0ffee'.repeat(10);
    const error = await rejection(connect(daemon.url, { websocket: NodeWebSocket, token: `${secret}\n` }));
    expect([error.code, error.message]).toEqual([
      'CONNECTION_REJECTED',
      'connect(): options.token holds a line break (\\n) at character 61 of 61, which no HTTP header can carry. ' +
        "A token read from a file keeps the file's last newline: trim it (token.trim()).",
    ]);
    const carriage = await rejection(connect(daemon.url, { websocket: NodeWebSocket, token: `a\rb` }));
    expect(carriage.message).toMatch(
      /^connect\(\): options\.token holds a carriage return \(\\r\) at character 2 of 3,/,
    );
    const bell = await rejection(connect(daemon.url, { websocket: NodeWebSocket, token: `a\u0007` }));
    expect(bell.message).toMatch(
      /^connect\(\): options\.token holds a control character \(U\+0007\) at character 2 of 2,/,
    );
  });

  it('turns a constructor that throws into CONNECTION_REJECTED naming the url', async () => {
    const thrown = new Error('no sockets here');
    // biome-ignore lint/complexity/useArrowFunction: it is called with `new`, which an arrow refuses.
    const Throwing = function () {
      throw thrown;
    } as unknown as typeof NodeWebSocket;
    const error = await rejection(connect(daemon.url, { websocket: Throwing }));
    expect([error.code, error.message, error.cause]).toEqual([
      'CONNECTION_REJECTED',
      `Failed to open WebSocket to ${daemon.url}`,
      thrown,
    ]);
  });

  it("uses the runtime's WebSocket when none is injected", async () => {
    if (typeof globalThis.WebSocket === 'undefined') {
      // Node 20: capnweb's `new WebSocket(url)` would throw a bare ReferenceError; the text says what to pass.
      const error = await rejection(connect(daemon.url));
      expect([error.code, error.message]).toEqual([
        'CONNECTION_REJECTED',
        `Failed to open WebSocket to ${daemon.url}: this runtime has no global WebSocket (Node 20 has none). ` +
          "Pass the ws package's: import { WebSocket } from 'ws', then connect(url, { websocket: WebSocket }).",
      ]);
    } else {
      const native = await connect(daemon.url);
      await expect(native.execute({ code: 'async () => 1' })).resolves.toMatchObject({ result: 1 });
      await native.dispose();
    }
  });

  it('reports an unreachable daemon as CONNECTION_REJECTED at connect', async () => {
    const closedPort = `ws://127.0.0.1:1`;
    const error = await rejection(connect(closedPort, { websocket: NodeWebSocket }));
    expect(error.code).toBe('CONNECTION_REJECTED');
    expect(error.message).toMatch(
      /^Executor at ws:\/\/127\.0\.0\.1:1 refused the connection: WebSocket connection failed: .*ECONNREFUSED/,
    );
    // It says what to do, not only what happened.
    expect(error.message).toMatch(/ Is `codemode-executor serve` running there, on that port\?$/);
  });

  it('refuses an option it does not have, naming it and listing the ones it has', () => {
    for (const [misspelled, nearest] of [
      [{ tokn: 'x' }, 'token'],
      [{ heartbeatIntervl: 10 }, 'heartbeatIntervalMs'],
    ] as const) {
      const name = Object.keys(misspelled)[0]!;
      let thrown: unknown;
      try {
        new RemoteExecutor('ws://127.0.0.1:1', misspelled as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({
        code: 'CONNECTION_REJECTED',
        message: `connect() has no option ${name} (did you mean ${nearest}?); the options are websocket, headers, token, rotateAfterExecutions, reconnect, maxReconnectAttempts, backoffMs, handshakeTimeoutMs, heartbeatIntervalMs, heartbeatTimeoutMs, timeout, countHostWaits, outbound, affinity`,
      });
    }
  });

  it("checks each number option against its row's bounds: backoffMs takes 0, the others need more", () => {
    expect(resolveConnectOptions({ backoffMs: 0 }).backoffMs).toBe(0);
    expect(() => resolveConnectOptions({ handshakeTimeoutMs: 0 })).toThrow(
      'connect(): options.handshakeTimeoutMs must be a finite number > 0, got 0',
    );
    expect(() => resolveConnectOptions({ heartbeatTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(
      'connect(): options.heartbeatTimeoutMs must be a finite number > 0, got Infinity',
    );
  });

  it('takes a renamed option under its old name, warning once, and refuses a bad value under the new name', async () => {
    const warnings: string[] = [];
    const listen = (warning: Error) => warnings.push(warning.message);
    process.on('warning', listen);
    try {
      expect(resolveConnectOptions({ heartbeatInterval: 250 }).heartbeatIntervalMs).toBe(250);
      expect(resolveConnectOptions({ heartbeatInterval: 260 }).heartbeatIntervalMs).toBe(260);
      expect(resolveConnectOptions({ heartbeatInterval: 1, heartbeatIntervalMs: 2 }).heartbeatIntervalMs).toBe(2);
      expect(() => resolveConnectOptions({ backoff: -1 })).toThrow(
        'connect(): options.backoffMs must be a finite number >= 0, got -1',
      );
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listen);
    }
    expect(warnings).toEqual([
      formatRenamedOption('connect()', 'heartbeatInterval', 'heartbeatIntervalMs', false),
      formatRenamedOption('connect()', 'heartbeatInterval', 'heartbeatIntervalMs', true),
      formatRenamedOption('connect()', 'backoff', 'backoffMs', false),
    ]);
  });

  it('sends one affinity header for the life of an executor, a fresh one per executor', async () => {
    const seen: (string | undefined)[] = [];
    const listener = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    // Records the header, then refuses the session: only the handshake matters here.
    listener.on('connection', (socket, request) => {
      seen.push(request.headers['x-codemode-executor-affinity'] as string | undefined);
      socket.close(1011, 'not a daemon');
    });
    await once(listener, 'listening');
    const url = `ws://127.0.0.1:${(listener.address() as { port: number }).port}`;
    try {
      const chosen = new RemoteExecutor(url, { websocket: NodeWebSocket, affinity: 'tenant-7', reconnect: false });
      await chosen.execute({ code: 'async () => 1' }).catch(() => {});
      await chosen.execute({ code: 'async () => 1' }).catch(() => {});
      const [first, second] = [
        new RemoteExecutor(url, { websocket: NodeWebSocket, reconnect: false }),
        new RemoteExecutor(url, { websocket: NodeWebSocket, reconnect: false }),
      ];
      await first.execute({ code: 'async () => 1' }).catch(() => {});
      await second.execute({ code: 'async () => 1' }).catch(() => {});
      await Promise.all([chosen.dispose(), first.dispose(), second.dispose()]);
      expect(seen.slice(0, 2)).toEqual(['tenant-7', 'tenant-7']);
      expect(seen[2]).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[3]).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[2]).not.toBe(seen[3]);
      expect(() => new RemoteExecutor(url, { affinity: 'two words' })).toThrow(
        'connect(): options.affinity must be a header value of 1 to 128 printable ASCII characters, got "two words"',
      );
    } finally {
      listener.close();
    }
  });

  it('refuses a url that is not ws:// or wss://', () => {
    expect(() => new RemoteExecutor('http://127.0.0.1:1', {})).toThrow(
      'connect(): url must be a ws:// or wss:// URL, got "http://127.0.0.1:1"',
    );
  });
});

describe('what crosses', () => {
  it("runs tool calls in the caller's process and brings back logs", async () => {
    const seen: unknown[] = [];
    const dispatch = createEnvelopeDispatch(
      { kv: (tool, args) => (seen.push([tool, args]), `${tool}(${args.join(',')})`) },
      { active: true },
    );
    const result = await executor.execute({
      code: 'async () => { console.log("two", 2); console.warn("w"); return [await kv.get("a"), await kv.put("b", 1)] }',
      providers: [{ name: 'kv', tools: ['get', 'put'] }],
      dispatch,
    });
    expect(result).toEqual({
      result: ['get(a)', 'put(b,1)'],
      logs: [
        { level: 'log', message: 'two 2' },
        { level: 'warn', message: 'w' },
      ],
    });
    expect(seen).toEqual([
      ['get', ['a']],
      ['put', ['b', 1]],
    ]);
  });

  it('brings back a Map and a Set as a Map and a Set', async () => {
    const { result } = await executor.execute({ code: 'async () => new Map([["s", new Set([1, 2])]])' });
    expect(result).toBeInstanceOf(Map);
    expect((result as Map<string, unknown>).get('s')).toEqual(new Set([1, 2]));
  });

  it("sends the sandbox's fetch through the caller's outbound function, as a Request and a Response", async () => {
    const requests: { method: string; url: string; header: string | null; body: string }[] = [];
    const result = await executor.execute({
      code: 'async () => { const r = await fetch("https://api.test/v1?q=1", { method: "PUT", headers: { "x-a": "1" }, body: "hello" }); return [r.status, r.headers.get("x-b"), await r.text()] }',
      outbound: async (request) => {
        requests.push({
          method: request.method,
          url: request.url,
          header: request.headers.get('x-a'),
          body: await request.text(),
        });
        return new Response('answered', { status: 201, headers: { 'x-b': '2' } });
      },
    });
    expect(result.result).toEqual([201, '2', 'answered']);
    expect(requests).toEqual([{ method: 'PUT', url: 'https://api.test/v1?q=1', header: '1', body: 'hello' }]);
  });

  it("blocks the sandbox's fetch when outbound is null", async () => {
    const { result } = await executor.execute({
      code: 'async () => { try { await fetch("https://api.test/"); return "fetched" } catch (e) { return e.message } }',
      outbound: null,
    });
    expect(result).toMatch(
      /^This worker is not permitted to access the internet via global functions like fetch\(\)\./,
    );
  });
});

describe('errors from the daemon', () => {
  it('rebuild the typed error from its code', async () => {
    const error = await rejection(executor.execute({ code: 'async () => 1', timeout: -1 }));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toMatch(/^request\.timeout must be a non-negative finite number/);
  });

  it("leave a provider's own failure to the program, as an error it can read", async () => {
    const dispatch = createEnvelopeDispatch(
      { kv: () => Promise.reject(new Error('vendor said no')) },
      { active: true },
    );
    const result = await executor.execute({
      code: 'async () => { try { await kv.get() } catch (e) { return e.message } }',
      providers: [{ name: 'kv', tools: ['get'] }],
      dispatch,
    });
    expect(result.result).toBe('vendor said no');
  });
});

describe('retained handles', () => {
  it('are keyed on the pool: another connection invokes and closes them, and the outbound stays reachable', async () => {
    const fetched: string[] = [];
    const retained = await executor.execute({
      code: 'async () => ({ read: async (path) => (await fetch("https://files.test/" + path)).text() })',
      outbound: (request) => {
        fetched.push(request.url);
        return new Response(`contents of ${new URL(request.url).pathname}`);
      },
      retainHandles: true,
    });
    expect(retained.error).toBeUndefined();
    const executionId = retained.executionId!;
    const handle = (retained.result as { read: Record<string, string> }).read[HANDLE_KEY]!;
    expect(typeof handle).toBe('string');

    const other = await connect(daemon.url, { websocket: NodeWebSocket });
    const invoked = await other.invokeHandle({ executionId, handle, args: ['a.txt'] });
    expect(invoked.result).toBe('contents of /a.txt');
    expect(fetched).toEqual(['https://files.test/a.txt']);

    await other.closeHandles(executionId);
    const error = await rejection(other.invokeHandle({ executionId, handle, args: ['b.txt'] }));
    expect(error.code).toBe('HANDLE_NOT_FOUND');
    await other.dispose();
  });
});

describe('timeouts on the wire', () => {
  let bounded: Daemon;

  beforeAll(async () => {
    bounded = await startDaemon(['--timeout', '400', '--max-timeout', '600']);
  });

  const NEVER = 'async () => new Promise(() => {})';

  it('sends null as a value: the daemon applies its maximum bound', async () => {
    const remote = await connect(bounded.url, { websocket: NodeWebSocket });
    const { error } = await remote.execute({ code: NEVER, timeout: null });
    expect(error).toMatch(/^Execution timed out at its 600 ms bound\./);
    await remote.dispose();
  });

  it('fills an unset timeout from the connection default, and a request field wins over it', async () => {
    const remote = await connect(bounded.url, { websocket: NodeWebSocket, timeout: 300 });
    expect((await remote.execute({ code: NEVER })).error).toMatch(/^Execution timed out at its 300 ms bound\./);
    expect((await remote.execute({ code: NEVER, timeout: 200 })).error).toMatch(
      /^Execution timed out at its 200 ms bound\./,
    );
    await remote.dispose();
  });

  it('leaves an unset timeout to the daemon when the connection sets none', async () => {
    const remote = await connect(bounded.url, { websocket: NodeWebSocket });
    expect((await remote.execute({ code: NEVER, timeout: undefined })).error).toMatch(
      /^Execution timed out at its 400 ms bound\./,
    );
    await remote.dispose();
  });
});
