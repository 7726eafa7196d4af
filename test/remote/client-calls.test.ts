/**
 * Which call a request is sent from, as the remote client names it (`parent` on the wire): by
 * async context where the runtime has `node:async_hooks` (Node does), and only when unambiguous
 * where it has not (a Worker without nodejs_compat, which has no `process`).
 */
import { describe, expect, it } from 'vitest';
import type { Dispatch } from '../../src/protocol/types.js';
import { ClientCalls, runtimeFrameStorage } from '../../src/remote/client-calls.js';

/** A tracked dispatch for a new call of `calls`, whose every tool call reports `calls.parent()` from inside it. */
function call(calls: ClientCalls, seen: (parent: string | undefined) => void = () => {}) {
  const id = calls.nextId();
  const dispatch: Dispatch = async () => {
    await Promise.resolve();
    seen(calls.parent());
    await new Promise((resolve) => setTimeout(resolve, 20));
    seen(calls.parent());
    return '{}';
  };
  return { id, dispatch: calls.track(id, { dispatch }).dispatch! };
}

describe('with async context (Node)', () => {
  it('finds node:async_hooks at run time', () => {
    expect(runtimeFrameStorage()).not.toBeNull();
  });

  it('names the call whose tool call a request is sent from, however many calls have tool calls in flight', async () => {
    const calls = new ClientCalls(runtimeFrameStorage());
    const seen: Record<string, (string | undefined)[]> = { a: [], b: [] };
    const a = call(calls, (parent) => seen.a!.push(parent));
    const b = call(calls, (parent) => seen.b!.push(parent));
    let outside: string | undefined = 'unset';
    await Promise.all([
      a.dispatch('codemode', 'x', '[]'),
      b.dispatch('codemode', 'y', '[]'),
      b.dispatch('codemode', 'z', '[]'),
      Promise.resolve().then(() => {
        outside = calls.parent();
      }),
    ]);
    expect(seen).toEqual({ a: [a.id, a.id], b: [b.id, b.id, b.id, b.id] });
    // A request sent beside them, from no tool call, names none.
    expect(outside).toBeUndefined();
  });

  it('names no call of another client, nor a tool call that has answered', async () => {
    const storage = runtimeFrameStorage();
    const calls = new ClientCalls(storage);
    const other = new ClientCalls(storage);
    let fromOther: string | undefined = 'unset';
    let afterAnswer: Promise<string | undefined> | undefined;
    const { dispatch } = call(other);
    const mine = calls.track(calls.nextId(), {
      dispatch: (async () => {
        afterAnswer = new Promise((resolve) => setTimeout(() => resolve(calls.parent()), 10));
        return '{}';
      }) as Dispatch,
    });
    await other.track(other.nextId(), {
      dispatch: (async () => {
        fromOther = calls.parent();
        return dispatch('codemode', 'x', '[]');
      }) as Dispatch,
    }).dispatch!('codemode', 'x', '[]');
    await mine.dispatch!('codemode', 'x', '[]');
    expect(fromOther).toBeUndefined();
    expect(await afterAnswer).toBeUndefined();
  });
});

describe('without async context (a Worker without nodejs_compat)', () => {
  it('names a call only while it is the one call with a tool call in flight', async () => {
    const calls = new ClientCalls(null);
    expect(calls.parent()).toBeUndefined();
    const a = call(calls);
    const b = call(calls);
    const first = a.dispatch('codemode', 'x', '[]');
    const whileOnlyA = calls.parent();
    const second = b.dispatch('codemode', 'y', '[]');
    const whileBoth = calls.parent();
    await Promise.all([first, second]);
    expect([whileOnlyA, whileBoth, calls.parent()]).toEqual([a.id, undefined, undefined]);
  });
});
