/**
 * The two native executors a Node host puts under upstream's runtime: IsolateExecutor in the
 * test's own process (a) and connect() to a real daemon (b). One pool member each, on purpose: a
 * snippet's nested run (`codemode.run`) needs a second process while the outer run waits in its
 * tool call, and must get one beyond `maxWorkers` rather than wait forever on its parent.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { WebSocket } from 'ws';
import { CodemodeExecutor, connect } from '../../../src/index.js';
import { IsolateExecutor } from '../../../src/isolate/index.js';
import { type Daemon, startDaemon, stopAllDaemons } from '../../remote/support/daemon.js';

const TOKEN = 'durable-test-token';

interface OpenedExecutor {
  executor: CodemodeExecutor;
  close(): Promise<void>;
}

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

/** Declares `scenario` once per executor; `executor()` is open from the block's first test to its last. */
export function describeOnBothExecutors(title: string, scenario: (executor: () => CodemodeExecutor) => void): void {
  describe.each(Object.keys(EXECUTORS))(`${title}, on %s`, (kind) => {
    let opened: OpenedExecutor | undefined;
    beforeAll(async () => {
      opened = await EXECUTORS[kind]!();
    });
    afterAll(async () => {
      await opened?.close();
      await stopAllDaemons();
    });
    scenario(() => {
      if (!opened) throw new Error(`The ${kind} executor did not open; see the beforeAll failure`);
      return opened.executor;
    });
  });
}
