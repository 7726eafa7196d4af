/**
 * Refused calls are logged without letting a client drown the daemon's log: each kind of refusal
 * on each connection writes its first lines of a window, and the rest are summed up in one line.
 */
import { describe, expect, it } from 'vitest';
import { ExecutorError } from '../../../src/protocol/index.js';
import { Connection } from '../../../src/server/calls/connection.js';
import { ConnectionEndpoint } from '../../../src/server/calls/endpoint.js';
import { formatExecutionRefused } from '../../../src/server/texts.js';
import { idleServerContext } from '../support/server-context.js';

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
    expect(lines.at(-1)).toBe(
      '40 more calls refused (connection 7 INVALID_REQUEST) in the last 10 s; not logged one by one',
    );
    expect(lines).toHaveLength(12);
  });

  it('bound refused messages that are no execution too: a malformed closeHandles, an oversized call', async () => {
    const lines: string[] = [];
    const server = idleServerContext(lines);
    const endpoint = new ConnectionEndpoint(new Connection(3, server, () => {}));
    for (let i = 0; i < 30; i++) await expect(endpoint.closeHandles(7)).rejects.toThrow();
    for (let i = 0; i < 30; i++) expect(() => endpoint.rejectOversizedMessage(2_000_000, 1_000_000)).toThrow();
    expect(lines.filter((line) => line.startsWith('connection 3 refused a message: closeHandles'))).toHaveLength(10);
    expect(lines.filter((line) => line.startsWith('connection 3 refused a message:'))).toHaveLength(20);
    server.refusals.flush();
    expect(lines).toContain(
      '20 more calls refused (connection 3 INVALID_REQUEST) in the last 10 s; not logged one by one',
    );
    expect(lines).toHaveLength(22);
  });
});
