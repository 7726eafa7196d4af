/**
 * The host stays up, proven where a crash cannot hide: a real Node process running the hostile
 * programs through IsolateExecutor (Node's default ends a process on an unhandled rejection), and
 * a real daemon serving them over connect().
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { INERT_FUNCTION_TEXT } from '../../src/protocol/texts.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { startDaemon, stopAllDaemons } from '../support/daemon.js';

afterAll(stopAllDaemons);

const FIXTURE = fileURLToPath(new URL('./fixtures/hostile-host.ts', import.meta.url));

describe('a host process', () => {
  it('survives the relay, functions in a result and a log flood, and exits on its own', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
    // Where this machine cannot confine workerd, 'auto' says so once, as a warning: nothing else.
    const unconfinedWarning =
      /^\(node:\d+\) \[CODEMODE_UNCONFINED\] Warning: .*\n(\(Use `node --trace-warnings \.\.\.` to show where the warning was created\)\n)?/;
    expect({ code, stderr: stderr.replace(unconfinedWarning, '') }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('host alive');
    expect(JSON.parse(lines.at(-2)!)).toEqual([
      'refused',
      '[{"answer":42}]',
      `${INERT_FUNCTION_TEXT} ${INERT_FUNCTION_TEXT}`,
      '{"answer":42}',
      'done',
      101,
      'next',
    ]);
  });
});

describe('a daemon', () => {
  it('survives the same programs from a client, and serves the next execution', async () => {
    const daemon = await startDaemon();
    let exited = false;
    void daemon.exited.then(() => (exited = true));
    const executor = await connect(daemon.url, {
      websocket: NodeWebSocket,
      outbound: () => new Response('answered'),
    });
    try {
      const relayed = await executor.execute({
        code: 'async () => { try { await fetch("http://x.test/", { method: "TRACE" }); return "sent" } catch (e) { return "refused" } }',
      });
      expect(relayed.result).toBe('refused');
      const withFunctions = await executor.execute({
        code: 'async () => [{ answer: 42, toJSON() {}, then() {} }]',
      });
      expect(JSON.stringify(withFunctions.result)).toBe('[{"answer":42}]');
      const [value] = withFunctions.result as unknown[];
      // Awaiting it settles, with the object's other keys: its `then` is the codec's stand-in.
      expect(JSON.stringify(await Promise.resolve(value))).toBe('{"answer":42}');
      expect(await executor.execute({ code: 'async () => "next"' })).toMatchObject({ result: 'next' });
      expect(exited).toBe(false);
    } finally {
      await executor.dispose();
    }
  });
});
