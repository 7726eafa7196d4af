/** docs/dialect.md's sanitize table, further rows observed on upstream, the reserved set, and the collision text. */
import { describe, expect, it } from 'vitest';
import { formatSanitizeCollision } from '../../src/codemode/texts.js';
import { detectSanitizeCollision, sanitizeToolName, TOOL_NAME_RESERVED_WORDS } from '../../src/codemode/tool-name.js';

describe('sanitizeToolName', () => {
  // docs/dialect.md's table.
  const tableRows: [string, string][] = [
    ['list-issues', 'list_issues'],
    ['search.code', 'search_code'],
    ['send email', 'send_email'],
    ['files:read!', 'filesread'],
    ['2fa-verify', '_2fa_verify'],
    ['delete', 'delete_'],
    ['-delete', '_delete'],
    ['поиск🔍', '_'],
  ];
  // What every upstream release from 0.1.0 to 0.5.6 answers for these names, as observed.
  const releaseRows: [string, string][] = [
    ['undefined', 'undefined_'],
    ['class', 'class_'],
    ['await', 'await_'],
    ['yield', 'yield_'],
    ['let', 'let_'],
    ['static', 'static_'],
    ['implements', 'implements_'],
    ['enum', 'enum_'],
    ['NaN', 'NaN'],
    ['', '_'],
    ['$ok', '$ok'],
    ['a__b', 'a__b'],
    ['Infinity', 'Infinity'],
    ['constructor', 'constructor'],
    ['__proto__', '__proto__'],
    ['then', 'then'],
    ['toString', 'toString'],
    ['get_weather', 'get_weather'],
    ['tool\ttab', 'tool_tab'],
  ];
  it.each([...tableRows, ...releaseRows])('%j -> %j', (raw, identifier) => {
    expect(sanitizeToolName(raw)).toBe(identifier);
  });
});

describe('the reserved set', () => {
  const upstreamList =
    'abstract, arguments, await, boolean, break, byte, case, catch, char, class, const, continue, debugger, default, delete, do, double, else, enum, eval, export, extends, false, final, finally, float, for, function, goto, if, implements, import, in, instanceof, int, interface, let, long, native, new, null, package, private, protected, public, return, short, static, super, switch, synchronized, this, throw, throws, transient, true, try, typeof, undefined, var, void, volatile, while, with, yield';

  it('is the 65 words upstream’s generator reserves in every release, no more and no fewer', () => {
    const words = upstreamList.split(', ');
    expect(words).toHaveLength(65);
    expect([...TOOL_NAME_RESERVED_WORDS].sort()).toEqual([...words].sort());
  });

  it('suffixes every reserved word and nothing that merely resembles one', () => {
    for (const word of TOOL_NAME_RESERVED_WORDS) expect(sanitizeToolName(word)).toBe(`${word}_`);
    for (const word of ['of', 'get', 'set', 'async', 'NaN', 'Class', 'delete_'])
      expect(sanitizeToolName(word)).toBe(word);
  });
});

describe('the collision text', () => {
  it('is composed character for character', () => {
    expect(formatSanitizeCollision('list-issues', 'list.issues', 'list_issues', 'gh')).toBe(
      'Tool names "list-issues" and "list.issues" both sanitize to "list_issues" in provider "gh"',
    );
  });

  it('reports the first colliding pair in raw-key order', () => {
    const providers = [
      { name: 'clean', fns: { a: 1, b: 2 } },
      { name: 'gh', fns: { 'list-issues': 1, other: 2, 'list.issues': 3, 'list issues': 4 } },
    ];
    expect(detectSanitizeCollision(providers)).toBe(
      'Tool names "list-issues" and "list.issues" both sanitize to "list_issues" in provider "gh"',
    );
    expect(detectSanitizeCollision([{ name: 'codemode', fns: { 'a-b': 1, a_b: 2 } }])).toBe(
      'Tool names "a-b" and "a_b" both sanitize to "a_b" in provider "codemode"',
    );
  });

  it('returns null when every identifier is distinct, across providers too', () => {
    expect(
      detectSanitizeCollision([
        { name: 'a', fns: { 'x-y': 1 } },
        { name: 'b', fns: { x_y: 1 } },
      ]),
    ).toBeNull();
  });

  it('keeps the upstream edge: an empty earlier name is not reported', () => {
    expect(detectSanitizeCollision([{ name: 'p', fns: { '': 1, _: 2 } }])).toBeNull();
    // The later key then holds the identifier, so a third one collides with it.
    expect(detectSanitizeCollision([{ name: 'p', fns: { '': 1, _: 2, '-': 3 } }])).toBe(
      'Tool names "_" and "-" both sanitize to "_" in provider "p"',
    );
  });
});
