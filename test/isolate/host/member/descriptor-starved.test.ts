/**
 * An in-process host whose members start while its file descriptors run out (issue 41): each
 * step of a start meets EMFILE in turn (the fixture leaves 0 to 24 free before each), and the
 * host lives through every one. A start that fails says EMFILE, the limit and `ulimit -n`; once
 * descriptors are free the host runs again, by itself. Before the fix, Node's spawn reported
 * EMFILE as an 'error' event nobody listened to, and the host died of it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const FIXTURE = 'test/isolate/host/member/fixtures/descriptor-starved-host.ts';
const FD_LIMIT = 256;

describe.runIf(process.platform === 'linux')('a host out of file descriptors', () => {
  it('refuses the runs it cannot start a member for, naming EMFILE and the limit, and runs again after', {
    timeout: 120_000,
  }, () => {
    const run = spawnSync(
      'sh',
      ['-c', `ulimit -n ${FD_LIMIT} && exec "$0" "$@"`, process.execPath, '--import', 'tsx', FIXTURE],
      { cwd: ROOT, encoding: 'utf8', timeout: 110_000 },
    );
    expect({ status: run.status, stderr: run.stderr.includes("Unhandled 'error' event") }).toEqual({
      status: 0,
      stderr: false,
    });
    const { outcomes, after } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      outcomes: { free: number; ok: boolean; message?: string }[];
      after: unknown;
    };
    const refused = outcomes.filter((outcome) => !outcome.ok);
    // With none free nothing starts; with 24 free a member does: both sides of the fault were met.
    expect(outcomes[0]!.ok).toBe(false);
    expect(outcomes.at(-1)!.ok).toBe(true);
    for (const { message } of refused) {
      expect(message).toMatch(/^The workerd sandbox could not be started: .*\(EMFILE; its limit is 256, `ulimit -n`\)/);
      expect(message).toContain('Raise `ulimit -n`');
    }
    expect(after).toBe('again');
  });
});
