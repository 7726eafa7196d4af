/**
 * The two real native executors a test compares: an `IsolateExecutor` in process (one member, no
 * spare) and `connect()`'s executor to a daemon of its own. Call at a file's top level: it adds
 * the hooks that make both before the file's tests and dispose of both after.
 */
import { afterAll, beforeAll } from 'vitest';
import { IsolateExecutor } from '../../src/isolate/index.js';
import type { Executor } from '../../src/protocol/types.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from './client.js';
import { startDaemon, stopAllDaemons } from './daemon.js';

export interface IsolateAndRemote {
  isolate: IsolateExecutor;
  remote: Executor;
}

export function isolateAndRemote(): IsolateAndRemote {
  const executors = {} as IsolateAndRemote;
  beforeAll(async () => {
    executors.isolate = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    const daemon = await startDaemon();
    executors.remote = await connect(daemon.url, { websocket: NodeWebSocket });
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled([executors.isolate?.dispose(), executors.remote?.dispose()]);
    await stopAllDaemons();
  });
  return executors;
}
