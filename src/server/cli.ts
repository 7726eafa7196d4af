#!/usr/bin/env node
/**
 * `codemode-executor serve`: the executor daemon. Serves an IsolateExecutor over capnweb on a ws
 * server until SIGTERM, SIGINT or the loss of its parent. docs/remote.md documents the flags.
 * `codemode-executor bundle`: a module map of npm packages (bundle-command.ts, docs/packages.md).
 */
import { readFileSync } from 'node:fs';
import { IsolateExecutor } from '../isolate/index.js';
import { messageOf } from '../protocol/message-of.js';
import { PROTOCOL_VERSION } from '../protocol/version.js';
import { runBundleCommand } from './command/bundle-command.js';
import { parseCommandLine, USAGE, UsageError } from './command/cli-args.js';
import { runDaemon } from './command/run-daemon.js';
import { guardProcessStdio } from './command/stdio-guard.js';
import { formatUsageErrorLine, formatVersion } from './texts.js';

/** The package's manifest: two levels up from src/server/ and from dist/server/ alike. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

async function main(): Promise<void> {
  // Before anything can write: the executor's construction may print a warning to stderr.
  guardProcessStdio();
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'bundle') {
    await runBundleCommand(rest);
    return;
  }
  const parsed = parseCommandLine(process.argv.slice(2), process.env);
  if (parsed.command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (parsed.command === 'version') {
    process.stdout.write(formatVersion(packageVersion(), PROTOCOL_VERSION));
    return;
  }
  const executor = new IsolateExecutor(parsed.executor);
  try {
    await runDaemon(executor, parsed.daemon);
  } catch (error) {
    await executor.dispose();
    throw error;
  }
}

main().catch((error: unknown) => {
  const message = messageOf(error);
  process.stderr.write(error instanceof UsageError ? formatUsageErrorLine(message) : `codemode-executor: ${message}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
