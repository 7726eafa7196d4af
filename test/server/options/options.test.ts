/**
 * The daemon's new bounds as options and flags (issue 22): each flag sets its option, each option
 * has its default, a bad value is refused naming the option, and the server reports the retained
 * executions it holds.
 */
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../../src/protocol/index.js';
import { formatRenamedOption } from '../../../src/protocol/texts.js';
import { connect } from '../../../src/remote/index.js';
import { parseCommandLine, USAGE } from '../../../src/server/command/cli-args.js';
import { createExecutorServer, SERVER_DEFAULTS } from '../../../src/server/index.js';
import { resolveServerOptions, SERVER_NUMBERS } from '../../../src/server/options/server-options.js';
import { NodeWebSocket } from '../../support/client.js';
import { waitUntil } from '../../support/daemon.js';

const idle: Executor = {
  execute: async () => ({ logs: [] }),
  invokeHandle: async () => ({ logs: [] }),
  closeHandles: async () => {},
  dispose: async () => {},
};

describe('the session and retention flags', () => {
  it('set their server options', () => {
    const parsed = parseCommandLine(
      [
        'serve',
        ...['--max-rpc-exports', '100', '--max-rpc-imports', '200'],
        ...['--max-retained-per-connection', '3', '--retained-idle-timeout-ms', '4000', '--proxy-protocol'],
      ],
      {},
    );
    if (parsed.command !== 'serve') throw new Error('expected serve');
    expect(parsed.daemon).toEqual({
      maxRpcExports: 100,
      maxRpcImports: 200,
      maxRetainedPerConnection: 3,
      retainedIdleTimeoutMs: 4000,
      proxyProtocol: true,
    });
    for (const flag of [
      '--max-rpc-exports',
      '--max-rpc-imports',
      '--max-retained-per-connection',
      '--retained-idle-timeout-ms',
      '--proxy-protocol',
    ]) {
      expect(USAGE).toContain(`  ${flag} `);
    }
  });

  it('refuse a value the option does not take, naming the flag', () => {
    expect(() => parseCommandLine(['serve', '--max-rpc-exports', '0'], {})).toThrow(
      '--max-rpc-exports must be at least 1, got 0',
    );
    expect(() => parseCommandLine(['serve', '--retained-idle-timeout-ms', 'soon'], {})).toThrow(
      '--retained-idle-timeout-ms must be an integer >= 1, got "soon"',
    );
  });
});

describe('the server options', () => {
  it('default to bounds, and proxyProtocol off', () => {
    const settings = resolveServerOptions({ executor: idle });
    expect([
      settings.maxRpcExports,
      settings.maxRpcImports,
      settings.maxRetainedPerConnection,
      settings.retainedIdleTimeoutMs,
      settings.proxyProtocol,
    ]).toEqual([8192, 8192, 16, 300_000, false]);
    expect(SERVER_DEFAULTS).toMatchObject({ maxRpcExports: 8192, maxRetainedPerConnection: 16 });
  });

  it('refuse a bad value naming the option', () => {
    expect(() => resolveServerOptions({ executor: idle, maxRetainedPerConnection: 0 })).toThrow(
      'createExecutorServer(): options.maxRetainedPerConnection must be an integer >= 1, got 0',
    );
    expect(() => resolveServerOptions({ executor: idle, proxyProtocol: 'yes' as unknown as boolean })).toThrow(
      /^createExecutorServer\(\): options\.proxyProtocol must be a boolean, got /,
    );
  });

  it('refuse each kind of option with its rule, at the top and in the admin listener', () => {
    const refusal = (options: unknown) => {
      try {
        resolveServerOptions(options as never);
      } catch (error) {
        return (error as Error).message;
      }
      return 'taken';
    };
    const invalid = (name: string, rule: string, got: string) =>
      `createExecutorServer(): ${name ? `options.${name}` : 'options'} must be ${rule}, got ${got}`;
    expect(refusal(null)).toBe(invalid('', 'an object', 'null'));
    expect(refusal({})).toBe(invalid('executor', 'an Executor', 'undefined'));
    expect(refusal({ executor: idle, host: '' })).toBe(invalid('host', 'an address', '""'));
    // The port's rule is its range, below it as above it (below, it once said `an integer >= 0`).
    expect(refusal({ executor: idle, port: -1 })).toBe(invalid('port', 'a port number (0 to 65535)', '-1'));
    expect(refusal({ executor: idle, port: 65_536 })).toBe(invalid('port', 'a port number (0 to 65535)', '65536'));
    expect(refusal({ executor: idle, token: [] })).toBe(
      invalid('token', 'a non-empty string, or an array of them', 'an array'),
    );
    expect(refusal({ executor: idle, daemonId: 'a@b' })).toBe(
      invalid('daemonId', 'a non-empty name without "@", spaces or controls', '"a@b"'),
    );
    expect(refusal({ executor: idle, log: 1 })).toBe(invalid('log', 'a function', '1'));
    expect(refusal({ executor: idle, admin: 1 })).toBe(invalid('admin', 'an object { host?, port }', '1'));
    expect(refusal({ executor: idle, admin: {} })).toBe(
      invalid('admin.port', 'a port number (0 to 65535)', 'undefined'),
    );
    expect(refusal({ executor: idle, admin: { port: 1, host: '' } })).toBe(invalid('admin.host', 'an address', '""'));
    expect(refusal({ executor: idle, host: '0.0.0.0' })).toBe(
      'Refusing to bind 0.0.0.0 without a token: a non-loopback address needs --token or the CODEMODE_EXECUTOR_TOKEN environment variable',
    );
  });

  it('take a null host as the default, and let other keys of the admin listener be', () => {
    const settings = resolveServerOptions({
      executor: idle,
      host: null,
      token: ['a', 'b'],
      admin: { port: 9000, extra: true } as never,
    });
    expect([settings.host, settings.tokens, settings.admin]).toEqual([
      '127.0.0.1',
      ['a', 'b'],
      { host: '127.0.0.1', port: 9000 },
    ]);
  });

  it('a server reports the retained executions it holds, of open connections and of gone ones', async () => {
    let retained = 0;
    const retaining: Executor = {
      ...idle,
      execute: async (request) =>
        request.retainHandles === true ? { logs: [], executionId: `run-${++retained}` } : { logs: [] },
    };
    const server = await createExecutorServer({ executor: retaining, port: 0 });
    const client = await connect(server.url, { websocket: NodeWebSocket });
    try {
      expect(server.retained).toEqual({ open: 0, gone: 0 });
      await client.execute({ code: 'async () => 1', retainHandles: true });
      await client.execute({ code: 'async () => 1', retainHandles: true });
      await client.execute({ code: 'async () => 1' });
      expect(server.retained).toEqual({ open: 2, gone: 0 });
      await client.closeHandles(`run-1@${server.daemonId}`);
      expect(server.retained).toEqual({ open: 1, gone: 0 });
      await client.dispose();
      await waitUntil(() => server.retained.gone === 1);
      expect(server.retained).toEqual({ open: 0, gone: 1 });
    } finally {
      await client.dispose();
      await server.close();
    }
  });
});

/** The daemon's renamed options and flags: old option, new option, old flag, new flag. */
const RENAMED = [
  ['maxMessageSize', 'maxMessageBytes', 'max-message-size', 'max-message-bytes'],
  ['clientPingInterval', 'clientPingIntervalMs', 'client-ping-interval', 'client-ping-interval-ms'],
  ['maxSendBuffer', 'maxSendBufferBytes', 'max-send-buffer', 'max-send-buffer-bytes'],
  ['handshakeTimeout', 'handshakeTimeoutMs', 'handshake-timeout', 'handshake-timeout-ms'],
  ['drainTimeout', 'drainTimeoutMs', 'drain-timeout', 'drain-timeout-ms'],
  ['retainedIdleTimeout', 'retainedIdleTimeoutMs', 'retained-idle-timeout', 'retained-idle-timeout-ms'],
] as const;

/** The process warnings `run` causes; a process warning is emitted on a later tick. */
async function warningsOf(run: () => void): Promise<string[]> {
  const warnings: string[] = [];
  const listen = (warning: Error) => warnings.push(warning.message);
  process.on('warning', listen);
  try {
    run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listen);
  }
  return warnings;
}

describe('a renamed option or flag (docs/remote.md, "Renamed options")', () => {
  it('takes each old option as its new one, and warns once for each', async () => {
    const warnings = await warningsOf(() => {
      for (const [old, renamed] of RENAMED) {
        const { min } = SERVER_NUMBERS[renamed];
        const first = resolveServerOptions({ executor: idle, [old]: 4000 });
        const second = resolveServerOptions({ executor: idle, [old]: 5000 });
        expect([first[renamed], second[renamed]], old).toEqual([4000, 5000]);
        expect(() => resolveServerOptions({ executor: idle, [old]: min - 1 })).toThrow(
          `createExecutorServer(): options.${renamed} must be an integer >= ${min}, got ${min - 1}`,
        );
      }
    });
    expect(warnings).toEqual(
      RENAMED.map(([old, renamed]) => formatRenamedOption('createExecutorServer()', old, renamed, false)),
    );
  });

  it('takes each old flag as its new one, warns once for each, and refuses a bad value under the name given', async () => {
    const warnings = await warningsOf(() => {
      for (const [, , oldFlag] of RENAMED) {
        parseCommandLine(['serve', `--${oldFlag}`, '1'], {});
        parseCommandLine(['serve', `--${oldFlag}`, '2'], {});
      }
    });
    expect(warnings).toEqual(
      RENAMED.map(([, , oldFlag, flag]) =>
        formatRenamedOption('codemode-executor serve', `--${oldFlag}`, `--${flag}`, false),
      ),
    );
    for (const [, renamed, oldFlag, flag] of RENAMED) {
      const { min } = SERVER_NUMBERS[renamed];
      const parsed = parseCommandLine(['serve', `--${oldFlag}`, '4000'], {});
      if (parsed.command !== 'serve') throw new Error('expected serve');
      expect(parsed.daemon, oldFlag).toEqual({ [renamed]: 4000 });
      expect(() => parseCommandLine(['serve', `--${oldFlag}`, 'soon'], {})).toThrow(
        `--${oldFlag} must be an integer >= ${min}, got "soon"`,
      );
      const both = parseCommandLine(['serve', `--${oldFlag}`, '4000', `--${flag}`, '7'], {});
      expect(both.command === 'serve' && both.daemon[renamed], oldFlag).toBe(7);
    }
  });

  it('suggests the nearest option for an unknown one', () => {
    expect(() => resolveServerOptions({ executor: idle, maxRetainedPerConection: 2 } as never)).toThrow(
      /^createExecutorServer\(\) has no option maxRetainedPerConection \(did you mean maxRetainedPerConnection\?\); the options are executor, host, port,/,
    );
  });
});
