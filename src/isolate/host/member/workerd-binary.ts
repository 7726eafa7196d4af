/**
 * Where the workerd binary is. The `workerd` package ships its binary in one optional platform
 * package per OS and CPU; its postinstall only copies that binary over `workerd/bin/workerd`, and
 * npm 11 does not run it by default. So we resolve the platform package ourselves, the way the
 * package's own `lib/main.js` does, and never rely on `workerd/bin/workerd`.
 *
 * `CODEMODE_WORKERD_BINARY` names another binary instead, read once per process: the matrix's
 * `ours-workerd-newest` column runs a daemon with the registry's newest workerd this way, to see
 * a workerd release before the pin moves to it (docs/isolate.md).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, endianness } from 'node:os';
import { dirname, join } from 'node:path';
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import { isolateText } from '../../host/texts.js';

const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'darwin arm64 LE': '@cloudflare/workerd-darwin-arm64',
  'darwin x64 LE': '@cloudflare/workerd-darwin-64',
  'linux arm64 LE': '@cloudflare/workerd-linux-arm64',
  'linux x64 LE': '@cloudflare/workerd-linux-64',
};

/** The environment variable that names another workerd binary. */
export const WORKERD_BINARY_ENV = 'CODEMODE_WORKERD_BINARY';

let cached: string | undefined;

/** The package that carries this platform's workerd binary; SANDBOX_UNAVAILABLE on a platform workerd does not ship for. */
export function workerdPlatformPackage(): string {
  const key = `${process.platform} ${arch()} ${endianness()}`;
  const platformPackage = PLATFORM_PACKAGES[key];
  if (platformPackage === undefined) {
    throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.platformUnsupported(key));
  }
  return platformPackage;
}

export function resolveWorkerdBinary(): string {
  if (cached !== undefined) return cached;
  const named = process.env[WORKERD_BINARY_ENV];
  if (named !== undefined && named !== '') {
    if (!existsSync(named))
      throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.binaryNamedMissing(WORKERD_BINARY_ENV, named));
    cached = named;
    return named;
  }
  const platformPackage = workerdPlatformPackage();
  // Resolve from the workerd package, so the platform package is the one its version pinned.
  const require = createRequire(import.meta.url);
  let binary: string;
  try {
    const fromWorkerd = createRequire(require.resolve('workerd/package.json'));
    binary = join(dirname(fromWorkerd.resolve(`${platformPackage}/package.json`)), 'bin', 'workerd');
  } catch (error) {
    throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.binaryMissing(platformPackage, messageOf(error)), {
      cause: error,
    });
  }
  if (!existsSync(binary)) {
    throw new ExecutorError(
      'SANDBOX_UNAVAILABLE',
      isolateText.binaryMissing(platformPackage, `${binary} does not exist`),
    );
  }
  cached = binary;
  return binary;
}
