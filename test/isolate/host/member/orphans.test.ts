/**
 * No workerd outlives its host: not when the host is SIGKILLed, not when it exits without
 * dispose(), and an idle executor does not keep a finished host alive.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../../../support/processes.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/short-lived-host.ts', import.meta.url));

interface Host {
  pids: number[];
  kill(): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startHost(mode: 'hang' | 'exit' | 'idle'): Promise<Host> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += String(chunk);
      const newline = stdout.indexOf('\n');
      if (newline >= 0)
        resolve({ pids: JSON.parse(stdout.slice(0, newline)) as number[], kill: () => child.kill('SIGKILL'), exited });
    });
    void exited.then(({ code }) =>
      reject(new Error(`the host exited (${String(code)}) before reporting its pids: ${stderr}`)),
    );
  });
}

describe('no orphaned workerd', () => {
  it('ends every workerd when the host is SIGKILLed', async () => {
    const host = await startHost('hang');
    expect(host.pids).toHaveLength(2);
    for (const pid of host.pids) expect(isAlive(pid)).toBe(true);
    host.kill();
    expect((await host.exited).signal).toBe('SIGKILL');
    await waitFor(() => host.pids.every((pid) => !isAlive(pid)), 'the workerd processes of a SIGKILLed host to end');
  });

  it('ends every workerd when the host calls process.exit without dispose', async () => {
    const host = await startHost('exit');
    expect((await host.exited).code).toBe(0);
    await waitFor(() => host.pids.every((pid) => !isAlive(pid)), 'the workerd processes of an exited host to end');
  });

  it('lets a host with an idle, undisposed executor finish, and its workerd end', async () => {
    const host = await startHost('idle');
    expect((await host.exited).code).toBe(0);
    await waitFor(() => host.pids.every((pid) => !isAlive(pid)), 'the workerd processes of a finished host to end');
  });
});
