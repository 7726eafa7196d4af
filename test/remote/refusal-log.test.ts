/**
 * Refused calls are logged without letting a client drown the daemon's log: each kind of refusal
 * on each connection writes its first lines of a window, and the rest are summed up in one line.
 */
import { describe, expect, it } from 'vitest';
import { ExecutorError } from '../../src/protocol/index.js';
import { Connection } from '../../src/server/connection.js';
import { formatCallRefusalsSuppressed, formatExecutionRefused } from '../../src/server/texts.js';
import { idleServerContext } from './support/server-context.js';

describe('refused calls in the log', () => {
  it('are written one by one up to a share per window, then summed up in one line', () => {
    const lines: string[] = [];
    const server = idleServerContext(lines);
    const connection = new Connection(7, server, () => {});
    const error = new ExecutorError('INVALID_REQUEST', 'execute: the request must be an object, got null');
    for (let i = 0; i < 50; i++) connection.refuse('execute', error);
    // Another kind of refusal on the same connection keeps a share of its own.
    connection.refuse('execute', new ExecutorError('LIMIT_EXCEEDED', 'too many'));
    const one = formatExecutionRefused(7, 'execute', error.message);
    expect(lines.filter((line) => line === one)).toHaveLength(10);
    expect(lines).toContain(formatExecutionRefused(7, 'execute', 'too many'));
    server.refusals.flush();
    expect(lines.at(-1)).toBe(formatCallRefusalsSuppressed(40, 'connection 7 INVALID_REQUEST', 10_000));
    expect(lines).toHaveLength(12);
  });
});
