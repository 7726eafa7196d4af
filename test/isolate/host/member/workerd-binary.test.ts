/**
 * How the pool picks its workerd binary: the installed workerd package's platform binary, or the
 * one `CODEMODE_WORKERD_BINARY` names (the matrix's ours-workerd-newest column runs a daemon so).
 * The choice is read once per process, so each case imports the module afresh.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const PINNED = join(ROOT, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');

async function freshResolver() {
  vi.resetModules();
  return (await import('../../../../src/isolate/host/member/workerd-binary.js')).resolveWorkerdBinary;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe.runIf(process.platform === 'linux' && process.arch === 'x64')('resolveWorkerdBinary', () => {
  it("runs the installed workerd package's binary by default", async () => {
    vi.stubEnv('CODEMODE_WORKERD_BINARY', '');
    expect((await freshResolver())()).toBe(PINNED);
  });

  it('runs the binary CODEMODE_WORKERD_BINARY names', async () => {
    const other = join(ROOT, 'node_modules', '.bin', 'workerd');
    vi.stubEnv('CODEMODE_WORKERD_BINARY', other);
    expect((await freshResolver())()).toBe(other);
  });

  it('refuses a name where there is no file, naming the variable', async () => {
    vi.stubEnv('CODEMODE_WORKERD_BINARY', '/nonexistent/workerd');
    const resolve = await freshResolver();
    expect(resolve).toThrow(isolateText.binaryNamedMissing('CODEMODE_WORKERD_BINARY', '/nonexistent/workerd'));
  });
});
