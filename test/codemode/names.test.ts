/** The name rules with the dialect's texts, and the reserved sets. */
import { describe, expect, it } from 'vitest';
import { DIALECT_RESERVED_NAMES, isReservedName, validateExecution } from '../../src/codemode/names.js';
import type { ConnectorBinding, ExtendedProvider } from '../../src/codemode/types.js';
import { JAVASCRIPT_RESERVED_WORDS, RESERVED_PROVIDER_NAMES } from '../../src/protocol/providers.js';
import { upstreamExecutorReservedNames } from './support/upstream.js';

const provider = (name: string, fns: ExtendedProvider['fns'] = {}): ExtendedProvider => ({ name, fns });
const connector = (
  name: string,
  callTool: ConnectorBinding['binding']['callTool'] = () => undefined,
): ConnectorBinding => ({
  name,
  binding: { callTool },
});

describe('validateExecution: the rule table', () => {
  const rows: [string, ExtendedProvider[], ConnectorBinding[], string][] = [
    ['reserved', [provider('Promise')], [], 'Provider name "Promise" is reserved'],
    ['identifier pattern', [], [connector('my-api')], 'Connector name "my-api" is not a valid JavaScript identifier'],
    ['reserved word', [provider('class')], [], 'Provider name "class" is a JavaScript reserved word'],
    ['duplicate provider', [provider('dup'), provider('dup')], [], 'Duplicate provider name "dup"'],
    [
      'connector clashes with provider',
      [provider('api')],
      [connector('api')],
      'Duplicate name "api" (connector clashes with provider)',
    ],
    [
      'sanitize collision',
      [provider('gh', { 'list-issues': () => 1, 'list.issues': () => 2 })],
      [],
      'Tool names "list-issues" and "list.issues" both sanitize to "list_issues" in provider "gh"',
    ],
  ];
  it.each(rows)('%s', (_rule, providers, connectors, text) => {
    expect(validateExecution(providers, connectors)).toBe(text);
  });

  it('uses the connector wording for two clashing connectors too', () => {
    expect(validateExecution([], [connector('api'), connector('api')])).toBe(
      'Duplicate name "api" (connector clashes with provider)',
    );
  });

  it('opens each text with the kind noun of the list the name came from', () => {
    expect(validateExecution([], [connector('Promise')])).toBe('Connector name "Promise" is reserved');
    expect(validateExecution([provider('my-api')], [])).toBe(
      'Provider name "my-api" is not a valid JavaScript identifier',
    );
    expect(validateExecution([], [connector('await')])).toBe('Connector name "await" is a JavaScript reserved word');
  });

  it('accepts valid, distinct names', () => {
    expect(
      validateExecution([provider('gh', { 'list-issues': () => 1 }), provider('$db')], [connector('crm')]),
    ).toBeNull();
  });

  it('stops at the first name a rule refuses', () => {
    // Each occurrence is checked before the next is seen, so a refused name never reaches the duplicate rule.
    expect(validateExecution([provider('eval'), provider('eval')], [])).toBe(
      'Provider name "eval" is a JavaScript reserved word',
    );
    expect(validateExecution([provider('console'), provider('console')], [])).toBe(
      'Provider name "console" is reserved',
    );
    expect(validateExecution([provider('ok'), provider('my-api'), provider('class')], [])).toBe(
      'Provider name "my-api" is not a valid JavaScript identifier',
    );
    // The pattern is ASCII-only.
    expect(validateExecution([provider('ünï')], [])).toBe('Provider name "ünï" is not a valid JavaScript identifier');
  });

  it('checks every provider before any connector, and names before the collision', () => {
    const colliding = provider('gh', { 'a-b': () => 1, a_b: () => 2 });
    expect(validateExecution([colliding, provider('class')], [connector('my-api')])).toBe(
      'Provider name "class" is a JavaScript reserved word',
    );
    expect(validateExecution([colliding], [connector('my-api')])).toBe(
      'Connector name "my-api" is not a valid JavaScript identifier',
    );
    expect(validateExecution([colliding], [])).toBe(
      'Tool names "a-b" and "a_b" both sanitize to "a_b" in provider "gh"',
    );
  });

  it('checks the language reserved words through the protocol list, eval and arguments included, async not', () => {
    for (const word of JAVASCRIPT_RESERVED_WORDS) {
      expect(validateExecution([provider(word)], [])).toBe(`Provider name "${word}" is a JavaScript reserved word`);
    }
    for (const word of ['eval', 'arguments']) expect(JAVASCRIPT_RESERVED_WORDS.has(word)).toBe(true);
    expect(validateExecution([provider('async')], [])).toBeNull();
  });
});

describe('the reserved names', () => {
  const upstream16 = [
    '__dispatchers',
    '__connectors',
    '__logs',
    '__CODEMODE_BINARY_TAG',
    '__bytesToBase64',
    '__base64ToBytes',
    '__encodeCodemodeValue',
    '__decodeCodemodeValue',
    '__stringifyForCodemode',
    '__parseForCodemode',
    'WorkerEntrypoint',
    'CodeExecutor',
    'Promise',
    'setTimeout',
    'Error',
    'console',
  ];

  it('matches the list the newest upstream executor ships, read from its dist', () => {
    expect(upstreamExecutorReservedNames()).toEqual(upstream16);
  });

  it('adds to the protocol set exactly the upstream names it does not already hold', () => {
    const expected = upstream16.filter((name) => !RESERVED_PROVIDER_NAMES.has(name));
    expect([...DIALECT_RESERVED_NAMES]).toEqual(expected);
    for (const name of DIALECT_RESERVED_NAMES) expect(RESERVED_PROVIDER_NAMES.has(name)).toBe(false);
  });

  it('refuses the union of both sets', () => {
    for (const name of [...upstream16, ...RESERVED_PROVIDER_NAMES]) {
      expect(isReservedName(name)).toBe(true);
      expect(validateExecution([provider(name)], [])).toBe(`Provider name "${name}" is reserved`);
    }
    expect(isReservedName('codemode')).toBe(false);
  });
});
