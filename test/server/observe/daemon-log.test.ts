/** The daemon's log lines: one event is one line, whatever the text it quotes. */
import { describe, expect, it } from 'vitest';
import {
  escapeControlCharacters,
  formatLogLine,
  listeningUrlOf,
  messageOfLogLine,
} from '../../../src/server/observe/log.js';

const AT = new Date('2026-12-01T07:45:29.123Z');

describe('escapeControlCharacters', () => {
  it('writes every line break and control as an escape, and leaves other text alone', () => {
    expect(escapeControlCharacters('a\nb\r\tc\\d')).toBe('a\\nb\\r\\tc\\\\d');
    expect(escapeControlCharacters('\u0000\u001b[31m\u007f\u0085')).toBe('\\x00\\x1b[31m\\x7f\\x85');
    expect(escapeControlCharacters('x\u2028y\u2029z')).toBe('x\\u2028y\\u2029z');
    expect(escapeControlCharacters('plain ünïcode ✓')).toBe('plain ünïcode ✓');
  });
});

describe('formatLogLine', () => {
  const FORGED = 'ok\n2026-01-01T00:00:00.000Z info connection 9 opened from 6.6.6.6:1\u2028';

  it('text: the time, the level, the message, on one line', () => {
    expect(formatLogLine('text', AT, 'info', 'listening on ws://127.0.0.1:8787')).toBe(
      '2026-12-01T07:45:29.123Z info listening on ws://127.0.0.1:8787',
    );
    const line = formatLogLine('text', AT, 'warn', FORGED);
    expect(line.split(/[\n\r\u2028\u2029]/)).toHaveLength(1);
    expect(line).toBe(
      '2026-12-01T07:45:29.123Z warn ok\\n2026-01-01T00:00:00.000Z info connection 9 opened from 6.6.6.6:1\\u2028',
    );
  });

  it('json: one object per line, the message intact once parsed', () => {
    const line = formatLogLine('json', AT, 'warn', FORGED);
    expect(line.split(/[\n\r\u2028\u2029]/)).toHaveLength(1);
    expect(JSON.parse(line)).toEqual({ time: '2026-12-01T07:45:29.123Z', level: 'warn', msg: FORGED });
  });

  it('reads back: the message of either format, and the address of the listening line', () => {
    for (const format of ['text', 'json'] as const) {
      const line = formatLogLine(format, AT, 'info', 'listening on ws://127.0.0.1:8787');
      expect(messageOfLogLine(line)).toBe('listening on ws://127.0.0.1:8787');
      expect(listeningUrlOf(line)).toBe('ws://127.0.0.1:8787');
    }
    expect(listeningUrlOf('listening on ws://127.0.0.1:8787')).toBeUndefined();
    expect(messageOfLogLine('not a log line')).toBeUndefined();
  });
});
