/**
 * The command line's words for a new user's first mistakes (issue 32, part 2, item 8): a missing
 * command prints the usage line, `-v` works as `-V`, an unknown flag gets the flag it most likely
 * meant, and a port in use names the flag that moves it.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine, USAGE } from '../../../src/server/command/cli-args.js';
import { spawnDaemon, stopAllDaemons } from '../../support/daemon.js';

afterAll(stopAllDaemons);

function refusal(...argv: string[]): string {
  try {
    parseCommandLine(argv, {});
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('the command line, for a new user', () => {
  it('prints the usage line when the command is missing', () => {
    const usageLine = USAGE.split('\n')[0]!;
    expect(usageLine).toBe('Usage: codemode-executor serve [options]');
    expect(refusal()).toBe(`missing command: ${usageLine}`);
    expect(refusal('--port', '8787')).toBe(`missing command: ${usageLine}`);
  });

  it('takes -v as -V', () => {
    expect(parseCommandLine(['-v'], {})).toEqual({ command: 'version' });
    expect(parseCommandLine(['serve', '-v'], {})).toEqual({ command: 'version' });
  });

  it('suggests the flag an unknown one most likely meant, and none when nothing is near', () => {
    expect(refusal('serve', '--max-worker', '4')).toBe('unknown flag --max-worker (did you mean --max-workers?)');
    expect(refusal('serve', '--tokn', 'x')).toBe('unknown flag --tokn (did you mean --token?)');
    // Two letters swapped: one slip, though Levenshtein counts two edits.
    expect(refusal('serve', '--prot', '8787')).toBe('unknown flag --prot (did you mean --port?)');
    expect(refusal('serve', '--memory-budget', '4')).toBe(
      'unknown flag --memory-budget (did you mean --memory-budget-mb?)',
    );
    expect(refusal('serve', '--frobnicate')).toBe('unknown flag --frobnicate');
  });

  it('names --port when the port is in use', { timeout: 60_000 }, async () => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const { port } = holder.address() as { port: number };
    try {
      const daemon = spawnDaemon(['--port', String(port)]);
      expect((await daemon.exited).code).toBe(1);
      expect(daemon.stderr.join('')).toContain(
        `codemode-executor: 127.0.0.1:${port} is already in use (EADDRINUSE): another daemon or program listens there; choose another port with --port (port), or --port 0 for a free one`,
      );
    } finally {
      holder.close();
    }
  });

  it('names --admin-port when the admin port is in use', { timeout: 60_000 }, async () => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const { port } = holder.address() as { port: number };
    try {
      const daemon = spawnDaemon(['--port', '0', '--admin-port', String(port)]);
      expect((await daemon.exited).code).toBe(1);
      expect(daemon.stderr.join('')).toContain(`choose another port with --admin-port (admin.port)`);
    } finally {
      holder.close();
    }
  });
});
