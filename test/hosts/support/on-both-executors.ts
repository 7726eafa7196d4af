/**
 * One host scenario, run on both native executors a Node host can put under CodemodeExecutor:
 * IsolateExecutor in the test's own process, and connect() to a real daemon started the way the
 * README starts one (a token, ws's WebSocket passed as it is typed). Supporting one more host is
 * one more test file that calls `describeOnBothExecutors`.
 *
 * The host code under test is upstream's own, imported from `@cloudflare/codemode`; each test
 * file imports the register entry first, as `node --import` would, so its entries load in Node.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { WebSocket } from 'ws';
import { CodemodeExecutor, connect } from '../../../src/index.js';
import { IsolateExecutor } from '../../../src/isolate/index.js';
import { type Daemon, startDaemon, stopAllDaemons } from '../../support/daemon.js';

/** The daemon's bearer token, as a host passes it. */
const TOKEN = 'host-test-token';

interface OpenedExecutor {
  executor: CodemodeExecutor;
  close(): Promise<void>;
}

/**
 * One pool member each, no warm spare: the machine's cores are shared, and a run started from a
 * tool call (upstream's runtime's `codemode.run`) must get a process beyond `maxWorkers` rather
 * than wait forever on its parent, in process and on the daemon alike.
 */
const EXECUTORS: Record<string, () => Promise<OpenedExecutor>> = {
  'IsolateExecutor in process': async () => {
    const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
    return { executor, close: () => executor.dispose() };
  },
  'connect() to a daemon': async () => {
    const daemon: Daemon = await startDaemon(['--token', TOKEN, '--max-workers', '1']);
    const executor = new CodemodeExecutor(await connect(daemon.url, { websocket: WebSocket, token: TOKEN }));
    return {
      executor,
      async close() {
        await executor.dispose();
        daemon.kill('SIGTERM');
        await daemon.exited;
      },
    };
  },
};

/**
 * Declares `scenario` once per executor, as a describe block of its own. `executor()` is the
 * CodemodeExecutor of the block, open from its first test to its last.
 */
export function describeOnBothExecutors(title: string, scenario: (executor: () => CodemodeExecutor) => void): void {
  describe.each(Object.keys(EXECUTORS))(`${title}, on %s`, (kind) => {
    let opened: OpenedExecutor | undefined;

    beforeAll(async () => {
      opened = await EXECUTORS[kind]!();
    });

    afterAll(async () => {
      await opened?.close();
      // A daemon whose start or stop failed half way is still stopped.
      await stopAllDaemons();
    });

    scenario(() => {
      if (!opened) throw new Error(`The ${kind} executor did not open; see the beforeAll failure`);
      return opened.executor;
    });
  });
}
