/**
 * RemoteExecutor inside workerd without nodejs_compat, against a real daemon: the client bundles
 * for a Worker with no Node built-in, opens the socket with the runtime's own WebSocket, and runs
 * tool calls, an outbound fetch and a Map result across the connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon, stopAllDaemons } from '../support/daemon.js';
import { bundleWorker, type RunningWorker, runWorker } from '../support/workerd.js';

let daemon: Daemon;
let worker: RunningWorker;
let imports: string[];

beforeAll(async () => {
  const bundle = await bundleWorker('test/remote/fixtures/workerd-worker.ts');
  imports = Object.values(bundle.metafile.outputs).flatMap((output) => output.imports.map((entry) => entry.path));
  [daemon, worker] = await Promise.all([startDaemon(), runWorker(bundle.code)]);
});

afterAll(async () => {
  await worker?.stop();
  await stopAllDaemons();
});

describe('RemoteExecutor in workerd without nodejs_compat', () => {
  it('bundles with no import but cloudflare:workers', () => {
    expect(imports.filter((path) => path !== 'cloudflare:workers')).toEqual([]);
  });

  it('runs executions against the daemon, its tools and outbound fetch staying in the Worker', async () => {
    const response = await fetch(`${worker.url}/?daemon=${encodeURIComponent(daemon.url)}`);
    const seen = (await response.json()) as Record<string, unknown>;
    expect(seen).toEqual({
      resultIsMap: true,
      entries: [['answer', 'get:a,1']],
      logs: [{ level: 'log', message: 'in sandbox' }],
      calls: [['get', ['a', 1]]],
      fetched: 'worker answered POST https://upstream.test/x ping',
      headersRefused: {
        code: 'CONNECTION_REJECTED',
        message:
          "options.headers needs options.websocket: the standard WebSocket constructor cannot send headers. Pass a constructor that accepts (url, { headers }), such as the ws package's WebSocket.",
      },
      afterDispose: { code: 'CONNECTION_BROKEN', message: 'RemoteExecutor is closed' },
    });
    // The Worker's dispose closed its socket.
    await daemon.waitForLine(/^connection 1 closed after 2 executions$/);
  });
});
