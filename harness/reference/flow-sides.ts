/**
 * The `ours-worker` column: the runtime on a `wrangler dev` host whose Worker's executor is a
 * daemon this side starts; it runs flows only, each session opened as a reference column's
 * (flow-sessions.ts). Node-only.
 */
import { referenceConfig } from '../columns.js';
import { startDaemonProcess } from '../processes.js';
import type { Side } from '../side-model.js';
import { texts } from '../texts.js';
import { flowSessions } from './flow-sessions.js';
import { startWranglerDev } from './wrangler.js';

const READY_TIMEOUT_MS = 120_000;

/**
 * The `ours-worker` column: a daemon, then `wrangler dev` on the Worker whose runtime's executor
 * connects to it. Both are stopped together.
 */
export async function startWorkerHostSide(): Promise<Side> {
  const daemon = await startDaemonProcess({ label: 'ours-worker', args: [] });
  try {
    const dev = await startWranglerDev('ours-worker', referenceConfig('ours-worker'), READY_TIMEOUT_MS);
    return {
      name: 'ours-worker',
      flowsOnly: true,
      run: () => Promise.reject(new Error(texts.cell.flowsOnly)),
      openFlow: flowSessions('ours-worker', dev.url, daemon.url),
      output: () => `${daemon.output()}\n${dev.output()}`,
      async dispose() {
        try {
          await dev.stop();
        } finally {
          await daemon.stop();
        }
      },
    };
  } catch (error) {
    await daemon.stop();
    throw error;
  }
}
