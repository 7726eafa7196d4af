/** The one UTF-8 byte count of the runtime-neutral code (src/protocol/utf8-bytes.ts), against Buffer's. */
import { describe, expect, it } from 'vitest';
import { utf8Bytes } from '../../src/protocol/utf8-bytes.js';

describe('utf8Bytes', () => {
  it.each([
    ['', 0],
    ['ascii only', 10],
    ['é', 2],
    ['€ and 字', 11],
    ['\u{1F600}', 4],
    ['\u007f\u0080', 3],
  ])('counts %j as %i bytes, as Buffer does', (text, bytes) => {
    expect(utf8Bytes(text)).toBe(bytes);
    expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
  });
});
