/**
 * The one writer of once-per-key warnings (src/protocol/warn-once.ts), which the renamed options'
 * deprecations and the dialect's unknown options both use.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { warningOnce } from '../../src/protocol/warn-once.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('warningOnce', () => {
  it('writes each key once, as a process warning of its type, composing the text only for a new key', () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const warn = warningOnce('SomeWarning');
    const composed: string[] = [];
    const text = (key: string) => () => {
      composed.push(key);
      return `about ${key}`;
    };
    warn('a', text('a'));
    warn('b', text('b'));
    warn('a', text('a'));
    expect(warnings.mock.calls).toEqual([
      ['about a', 'SomeWarning'],
      ['about b', 'SomeWarning'],
    ]);
    expect(composed).toEqual(['a', 'b']);
  });

  it('writes nothing more past its number of keys', () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const warn = warningOnce('SomeWarning', 2);
    for (const key of ['a', 'b', 'c', 'a']) warn(key, () => key);
    expect(warnings.mock.calls.map(([text]) => text)).toEqual(['a', 'b']);
  });

  it('goes to console.warn where there is no process (a Worker)', () => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {});
    vi.stubGlobal('process', undefined);
    try {
      warningOnce('SomeWarning')('a', () => 'about a');
    } finally {
      vi.unstubAllGlobals();
    }
    expect(warned.mock.calls).toEqual([['about a']]);
  });
});
