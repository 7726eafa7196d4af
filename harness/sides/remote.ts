/**
 * Ours over the wire: `new CodemodeExecutor(await connect(url))` to a real daemon process this side
 * starts (`codemode-executor serve`) and stops. Cases run exactly as on `ours` (the same
 * `describeOurCall`, the same `countHostWaits: false` wrapper); only the native executor differs.
 */
import { WebSocket } from 'ws';
import { CodemodeExecutor, connect, type RemoteExecutor, type WebSocketConstructor } from '../../src/index.js';
import { startDaemonProcess } from '../daemon-process.js';
import { runDialectCase, withHostWaitsUncounted } from './ours.js';
import type { Side } from './side.js';

/** One sandbox process, as on `ours`: the catalogue runs one case at a time on a shared machine. */
const DAEMON_ARGS = ['--max-workers', '1'];

/** Node 20 has no global WebSocket; the ws package's constructor also takes `{ headers }`. */
const NodeWebSocket = WebSocket as unknown as WebSocketConstructor;

export async function startRemoteSide(): Promise<Side> {
  const daemon = await startDaemonProcess({ label: 'ours-remote', args: DAEMON_ARGS });
  let native: RemoteExecutor;
  try {
    native = await connect(daemon.url, { websocket: NodeWebSocket });
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  const dialect = new CodemodeExecutor(native);
  const uncounted = new CodemodeExecutor(withHostWaitsUncounted(native));

  return {
    name: 'ours-remote',
    async run(item) {
      // A dead daemon is harness breakage, not every later case's result.
      const gone = daemon.gone();
      if (gone !== undefined) throw new Error(gone);
      return runDialectCase(item, dialect, uncounted);
    },
    async dispose() {
      try {
        await native.dispose();
      } finally {
        await daemon.stop();
      }
    },
  };
}
