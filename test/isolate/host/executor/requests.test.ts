/**
 * The request check's modules (src/isolate/host/executor/requests.ts): a frozen module object is
 * checked once and handed on as the same module on every call, so the channel escapes its text
 * once (a bundled set is passed on every call); anything that could change between calls is
 * checked afresh.
 */
import { describe, expect, it } from 'vitest';
import { checkExecuteRequest } from '../../../../src/isolate/host/executor/requests.js';
import { resolveSettings } from '../../../../src/isolate/host/options/resolve.js';

const settings = resolveSettings({});
const modulesOf = (modules: Record<string, unknown>) =>
  checkExecuteRequest({ code: 'async () => 1', modules }, settings).modules;

describe('modules in a request', () => {
  it('hands on a frozen module as the same checked module on every call', () => {
    const zod = Object.freeze({ js: 'export const z = 1' });
    const first = modulesOf({ zod });
    const second = modulesOf({ zod, other: 'export const o = 1' });
    expect(first.zod).toEqual({ js: 'export const z = 1' });
    expect(second.zod).toBe(first.zod);
    expect(Object.isFrozen(first.zod)).toBe(true);
  });

  it('checks afresh a module that is not frozen, or whose field is a getter', () => {
    const open = { js: 'export const a = 1' };
    expect(modulesOf({ open }).open).not.toBe(modulesOf({ open }).open);
    let text = 'export const g = 1';
    const getter = Object.freeze({
      get js() {
        return text;
      },
    });
    expect(modulesOf({ getter }).getter).toEqual({ js: 'export const g = 1' });
    text = 'export const g = 2';
    expect(modulesOf({ getter }).getter).toEqual({ js: 'export const g = 2' });
  });
});
