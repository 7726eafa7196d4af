#!/usr/bin/env node
/**
 * `codemode-executor serve`: the executor daemon. Serves an IsolateExecutor over capnweb on a ws
 * server until SIGTERM, SIGINT or the loss of its parent. docs/remote.md documents the flags.
 */
import { IsolateExecutor } from '../isolate/index.js';
import { messageOf } from '../protocol/errors.js';
import { parseCommandLine, USAGE, UsageError } from './cli-args.js';
import { runDaemon } from './run-daemon.js';

async function main(): Promise<void> {
  const parsed = parseCommandLine(process.argv.slice(2), process.env);
  if (parsed.command === 'help') {
    process.stdout.write(USAGE);
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
  process.stderr.write(`codemode-executor: ${message}\n`);
  if (error instanceof UsageError) process.stderr.write(`\n${USAGE}`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
