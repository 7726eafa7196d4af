/**
 * A member whose start fails leaves nothing behind: no descriptor in the host and no member
 * directory. The directories are counted in a temporary directory of this file's own (TMPDIR,
 * set before the first member is made), so members that other test files or other programs on the
 * machine start meanwhile are not counted.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfinement } from '../../../../src/isolate/host/confinement/detect.js';
import { MemberProcess } from '../../../../src/isolate/host/member/member-process.js';
import { resolveWorkerdBinary } from '../../../../src/isolate/host/member/workerd-binary.js';
import { DEFAULT_LIMITS } from '../../../../src/isolate/host/options.js';
import { OutboundServer } from '../../../../src/isolate/host/relay/outbound-server.js';

const previousTmpdir = process.env.TMPDIR;
let ownTmpdir: string;

beforeAll(() => {
  ownTmpdir = mkdtempSync(join(tmpdir(), 'codemode-test-tmp-'));
  // A confined member runs as another uid, which must search the directory its own lies in.
  chmodSync(ownTmpdir, 0o711);
  process.env.TMPDIR = ownTmpdir;
});

afterAll(() => {
  if (previousTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmpdir;
  rmSync(ownTmpdir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('a member that cannot start', () => {
  it('leaves no descriptor open and no directory behind when a file its view binds is gone', async () => {
    const confinement = resolveConfinement('required', resolveWorkerdBinary);
    if (!confinement.confined) throw new Error(confinement.reason);
    const relay = new OutboundServer(DEFAULT_LIMITS.maxRequestBodyBytes);
    const missing = join(ownTmpdir, 'codemode-gone.so');
    const plan = { ...confinement.plan, linkedFiles: [...confinement.plan.linkedFiles, missing] };
    const openDescriptors = () => readdirSync('/proc/self/fd').length;
    const directories = () =>
      readdirSync(ownTmpdir)
        .filter((name) => name.startsWith('codemode-member-'))
        .sort();
    const startMissing = () =>
      MemberProcess.start({
        binary: resolveWorkerdBinary(),
        relay,
        heapLimitMb: 64,
        limits: DEFAULT_LIMITS,
        startupTimeoutMs: 20_000,
        confinement: plan,
        cgroup: null,
      });
    // A first failed start opens what the process keeps for every member (the memory guard's
    // thread, loaded modules), so the count below sees only what one start leaves.
    await expect(startMissing()).rejects.toThrow(/ENOENT/);
    const descriptorsBefore = openDescriptors();
    await expect(startMissing()).rejects.toThrow(/ENOENT/);
    expect(openDescriptors()).toBeLessThanOrEqual(descriptorsBefore);
    expect(directories()).toEqual([]);
    await relay.close();
  });
});
