/**
 * The daemon's half of the wire mapping: the caller's stubs are held to the call's completion
 * guard (the protocol's CompletionGuard), so a tool call or a fetch after the execution settled
 * gets the completion text and never reaches the client.
 */
import { describe, expect, it } from 'vitest';
import { COMPLETED_MESSAGE, type CompletionGuard } from '../../../src/protocol/index.js';
import { executeRequestFromWire, invokeRequestFromWire } from '../../../src/server/calls/request-from-wire.js';
import type { WireFetch } from '../../../src/wire/types.js';

describe('the completion guard on the daemon', () => {
  it('answers a tool call after completion with the completion envelope, without calling the client', async () => {
    const calls: string[] = [];
    const guard: CompletionGuard = { active: true };
    const request = executeRequestFromWire(
      {
        code: 'c',
        dispatch: async (_provider, tool) => (calls.push(tool), '{"result":1}'),
        outboundMode: 'default',
      },
      guard,
    );
    await expect(request.dispatch!('p', 'before', '[]')).resolves.toBe('{"result":1}');
    guard.active = false;
    await expect(request.dispatch!('p', 'after', '[]')).resolves.toBe(JSON.stringify({ error: COMPLETED_MESSAGE }));
    expect(calls).toEqual(['before']);

    const invoke = invokeRequestFromWire(
      { executionId: 'e', handle: 'h', dispatch: async (_provider, tool) => (calls.push(tool), '{}') },
      [1],
      guard,
    );
    await expect(invoke.dispatch!('p', 'late', '[]')).resolves.toBe(JSON.stringify({ error: COMPLETED_MESSAGE }));
    expect([calls, invoke.args]).toEqual([['before'], [1]]);
  });

  it("refuses a fetch after completion with the completion text, without calling the client's outbound", async () => {
    let fetched = 0;
    const stub: WireFetch = async () => {
      fetched += 1;
      return { status: 200, statusText: 'OK', headers: [], body: null };
    };
    const guard: CompletionGuard = { active: true };
    const request = executeRequestFromWire({ code: 'c', dispatch: null, outboundMode: 'stub', outbound: stub }, guard);
    expect((await request.outbound!(new Request('https://x.test/'))).status).toBe(200);
    guard.active = false;
    await expect(request.outbound!(new Request('https://x.test/'))).rejects.toThrow(COMPLETED_MESSAGE);
    expect(fetched).toBe(1);
    expect(executeRequestFromWire({ code: 'c', dispatch: null, outboundMode: 'blocked' }, guard).outbound).toBeNull();
  });
});

describe('the fields a wire request carries', () => {
  it('become the native request fields, cpuTimeout among them, and only those present', () => {
    const guard: CompletionGuard = { active: true };
    const request = executeRequestFromWire(
      { code: 'c', dispatch: null, outboundMode: 'default', timeout: 900, cpuTimeout: 120 },
      guard,
    );
    expect(request).toEqual({ code: 'c', dispatch: null, timeout: 900, cpuTimeout: 120 });
    const bare = executeRequestFromWire({ code: 'c', dispatch: null, outboundMode: 'default' }, guard);
    expect(Object.keys(bare).sort()).toEqual(['code', 'dispatch']);
    const invoke = invokeRequestFromWire({ executionId: 'e', handle: 'h', dispatch: null, cpuTimeout: 30 }, [], guard);
    expect(invoke).toEqual({ executionId: 'e', handle: 'h', dispatch: null, args: [], cpuTimeout: 30 });
  });
});
