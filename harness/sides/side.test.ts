/** Which sides a case skips: its own skipOn entries, and every reference column when reference: false. */
import { describe, expect, it } from 'vitest';
import type { Case } from '../case-model.js';
import { isReferenceColumn, skipReason } from './side.js';

const base: Case = { id: 'c', description: 'd', features: ['result'], code: 'async () => 1', expect: { result: 1 } };

describe('skipReason', () => {
  it('runs a plain case everywhere', () => {
    for (const side of ['ours', 'ours-remote', '0.2.2', 'latest'] as const) expect(skipReason(base, side)).toBeNull();
  });

  it('skips exactly the sides a skipOn entry names, with its reason', () => {
    const item: Case = { ...base, skipOn: [{ versions: ['0.2.2', '0.3.8'], reason: 'the codec arrived in 0.3.7' }] };
    expect(skipReason(item, '0.2.2')).toBe('the codec arrived in 0.3.7');
    expect(skipReason(item, '0.3.8')).toBe('the codec arrived in 0.3.7');
    expect(skipReason(item, '0.4.4')).toBeNull();
    expect(skipReason(item, 'ours')).toBeNull();
  });

  it('keeps a reference: false case off every reference column but on ours', () => {
    const item: Case = { ...base, reference: false, reason: 'a spin wedges wrangler dev' };
    expect(skipReason(item, 'latest')).toMatch(/^reference: false — a spin wedges wrangler dev$/);
    expect(skipReason(item, '0.2.2')).not.toBeNull();
    expect(skipReason(item, 'ours')).toBeNull();
    expect(skipReason(item, 'ours-remote')).toBeNull();
  });

  it('knows which sides are reference columns', () => {
    expect(
      ['ours', 'ours-remote', '0.2.2', '0.3.8', '0.4.4', 'latest'].map((side) => isReferenceColumn(side as never)),
    ).toEqual([false, false, true, true, true, true]);
  });
});
