/**
 * A dead client's spinning execution: the daemon passes `{ signal }` to IsolateExecutor, whose
 * abort kills the spinning sandbox process, so the pool serves again long before the daemon's
 * maximum bound (300 s by default) would have ended the spin.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { connect } from '../../../src/remote/index.js';
import { NodeWebSocket } from '../../support/client.js';
import { startDaemon, stopAllDaemons } from '../../support/daemon.js';
import { isAlive, waitFor, waitForSpin, workerdDescendants } from '../../support/processes.js';

afterAll(stopAllDaemons);

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

it('a client killed while its program spins: the daemon releases the sandbox process and serves again', async () => {
  // One sandbox process and no spare: the next execution needs the very process the spin holds.
  const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
  const client = spawn(process.execPath, ['--import', 'tsx', 'test/server/fixtures/spinning-client.ts', daemon.url], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(client, 'exit');
  await new Promise<void>((resolve) =>
    client.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('in flight') && resolve()),
  );
  const [sandbox] = workerdDescendants(daemon.child.pid!);
  expect(sandbox).toBeDefined();
  // The tool call's answer reached the sandbox and the loop runs: no tool call can end it now.
  await waitForSpin(sandbox!);
  client.kill('SIGKILL');
  await exited;
  await daemon.waitForLine(/^connection 1 execute 1 cancelled: the client is gone$/);
  await waitFor(() => !isAlive(sandbox!), 'the spinning sandbox process to be killed');

  const executor = await connect(daemon.url, { websocket: NodeWebSocket });
  try {
    await expect(executor.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
  } finally {
    await executor.dispose();
  }
});
