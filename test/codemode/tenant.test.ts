/**
 * The dialect's `tenant` (the constructor's, and a call's over it) reaches the native request,
 * where `IsolateExecutor`'s tenant level reads it; left out, the request names none.
 */
import { describe, expect, it } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import type { ExecuteRequest, Executor } from '../../src/protocol/types.js';

function capturing(): { native: Executor; requests: ExecuteRequest[] } {
  const requests: ExecuteRequest[] = [];
  const native: Executor = {
    execute: async (request) => {
      requests.push(request);
      return { result: 1, logs: [] };
    },
    invokeHandle: () => Promise.reject(new Error('unused')),
    closeHandles: async () => {},
    dispose: async () => {},
  };
  return { native, requests };
}

describe("the dialect's tenant", () => {
  it("passes the constructor's tenant, a call's over it, and none when neither names one", async () => {
    const { native, requests } = capturing();
    await new CodemodeExecutor(native, { tenant: 'team-a' }).execute('async () => 1', []);
    await new CodemodeExecutor(native, { tenant: 'team-a' }).execute('async () => 1', [], { tenant: 'team-b' });
    await new CodemodeExecutor(native).execute('async () => 1', []);
    expect(requests.map((request) => request.tenant)).toEqual(['team-a', 'team-b', undefined]);
    expect('tenant' in requests[2]!).toBe(false);
  });

  it('refuses a tenant that is not a non-empty string, naming the option', () => {
    const { native } = capturing();
    expect(() => new CodemodeExecutor(native, { tenant: '' })).toThrow(TypeError);
    expect(() => new CodemodeExecutor(native, { tenant: 7 as unknown as string })).toThrow(/tenant/);
  });
});
