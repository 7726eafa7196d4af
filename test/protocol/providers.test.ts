import { parse, tokTypes } from 'acorn';
import { describe, expect, it } from 'vitest';
import {
  JAVASCRIPT_RESERVED_WORDS,
  PROVIDER_NAME_PATTERN,
  type ProviderDescriptor,
  providerRejection,
  RESERVED_PROVIDER_NAMES,
  validateProviders,
} from '../../src/protocol/index.js';
import { rejectName } from '../../src/protocol/providers.js';

const provider = (name: string): ProviderDescriptor => ({ name, tools: [] });
const validate = (...names: string[]) => validateProviders(names.map(provider));

const reservedText = (name: string) =>
  `Provider name "${name}" is reserved: the sandbox scope already binds it. Choose another name.`;
const notIdentifierText = (name: string) =>
  `Provider name "${name}" is not a valid JavaScript identifier: use ASCII letters, digits, _ and $, and do not start with a digit.`;
const reservedWordText = (name: string) =>
  `Provider name "${name}" is a JavaScript reserved word and cannot name a namespace. Choose another name.`;
const duplicateText = (name: string) =>
  `Provider name "${name}" is declared more than once. Every provider needs a distinct name.`;
const malformedText = (index: number) =>
  `Provider ${index} is malformed: a provider is {name: string, tools: string[]} with optional positionalArgs, proxySource and prelude.`;

/** A module binds each namespace as a `const`; acorn says which names that declaration refuses. */
function constDeclarationParses(name: string): boolean {
  try {
    parse(`const ${name} = 1;`, { ecmaVersion: 'latest', sourceType: 'module' });
    return true;
  } catch {
    return false;
  }
}

describe('validateProviders accepts', () => {
  it('no providers, an empty list, and ordinary identifiers', () => {
    expect(validateProviders(undefined)).toBeNull();
    expect(validateProviders([])).toBeNull();
    expect(validate('codemode', 'gh', '_', '$', '$api_2', 'Async', 'promise', 'undefined')).toBeNull();
    expect(
      validateProviders([
        { name: 'full', tools: ['a', 'b'], positionalArgs: false, proxySource: '(call) => ({})', prelude: '' },
      ]),
    ).toBeNull();
  });
});

describe('the rules and their texts', () => {
  it('refuses every name the sandbox scope binds', () => {
    expect([...RESERVED_PROVIDER_NAMES].sort()).toEqual(
      ['console', 'Promise', 'setTimeout', 'Error', 'Proxy', 'globalThis'].sort(),
    );
    for (const name of RESERVED_PROVIDER_NAMES) expect(validate(name)).toBe(reservedText(name));
  });

  it('opens the reserved and identifier texts with upstream’s own wording', () => {
    expect(reservedText('Promise').startsWith('Provider name "Promise" is reserved')).toBe(true);
    expect(validate('Promise')!.startsWith('Provider name "Promise" is reserved')).toBe(true);
    expect(validate('my-api')!.startsWith('Provider name "my-api" is not a valid JavaScript identifier')).toBe(true);
  });

  it('refuses names outside the ASCII identifier pattern', () => {
    for (const name of ['', 'my-api', '1abc', 'a b', 'ünï', 'naïve', 'π', 'a.b', 'abc\n', '\nabc', 'x\u200b']) {
      expect(validate(name)).toBe(notIdentifierText(name));
    }
  });

  it('anchors the pattern at both ends of the whole string', () => {
    expect(PROVIDER_NAME_PATTERN.test('abc\n')).toBe(false);
    expect(PROVIDER_NAME_PATTERN.test('a\nb')).toBe(false);
    expect(PROVIDER_NAME_PATTERN.source).toBe('^[a-zA-Z_$][a-zA-Z0-9_$]*$');
  });

  it('refuses every reserved word', () => {
    for (const word of JAVASCRIPT_RESERVED_WORDS) expect(validate(word)).toBe(reservedWordText(word));
  });

  it('covers every keyword acorn knows and every name a module-scope const cannot take', () => {
    const acornKeywords = Object.values(tokTypes).flatMap((type) => (type.keyword ? [type.keyword] : []));
    expect(acornKeywords.length).toBeGreaterThan(30);
    for (const keyword of acornKeywords) expect(JAVASCRIPT_RESERVED_WORDS.has(keyword)).toBe(true);
    const strictReserved = ['implements', 'interface', 'let', 'package', 'private', 'protected', 'public', 'static'];
    for (const word of [...strictReserved, 'await', 'yield', 'enum', 'eval', 'arguments']) {
      expect(JAVASCRIPT_RESERVED_WORDS.has(word)).toBe(true);
      expect(constDeclarationParses(word)).toBe(false);
    }
    // Every word on the list really cannot be a const there, and `async`, which can, is not on it.
    for (const word of JAVASCRIPT_RESERVED_WORDS) expect(constDeclarationParses(word)).toBe(false);
    expect(constDeclarationParses('async')).toBe(true);
    expect(JAVASCRIPT_RESERVED_WORDS.has('async')).toBe(false);
    expect(validate('async')).toBeNull();
  });

  it('refuses a duplicate', () => {
    expect(validate('a', 'b', 'a')).toBe(duplicateText('a'));
  });

  it('is case-sensitive', () => {
    expect(validate('Class', 'CONSOLE', 'api', 'Api')).toBeNull();
  });
});

describe('the rule order: reserved, pattern, reserved word, duplicate; provider by provider', () => {
  it('reports the reserved rule, not the duplicate, for a repeated reserved name', () => {
    expect(validate('Promise', 'Promise')).toBe(reservedText('Promise'));
  });

  it('reports the pattern rule, not the duplicate, for a repeated bad name', () => {
    expect(validate('my-api', 'my-api')).toBe(notIdentifierText('my-api'));
  });

  it('reports the reserved-word rule, not the duplicate, for a repeated keyword', () => {
    expect(validate('class', 'class')).toBe(reservedWordText('class'));
  });

  it('finishes one provider before it looks at the next', () => {
    expect(validate('ok', 'ok', 'Promise')).toBe(duplicateText('ok'));
    expect(validate('class', 'Promise')).toBe(reservedWordText('class'));
    expect(validate('my-api', 'console')).toBe(notIdentifierText('my-api'));
    expect(validate('console', 'my-api')).toBe(reservedText('console'));
  });
});

describe('malformed descriptors', () => {
  const cases: [string, unknown][] = [
    ['null', null],
    ['a string', 'api'],
    ['no tools', { name: 'api' }],
    ['no name', { tools: [] }],
    ['a numeric name', { name: 1, tools: [] }],
    ['tools that are not an array', { name: 'api', tools: 'search' }],
    ['a tool that is not a string', { name: 'api', tools: ['ok', 2] }],
    ['positionalArgs that is not a boolean', { name: 'api', tools: [], positionalArgs: 'yes' }],
    ['positionalArgs null', { name: 'api', tools: [], positionalArgs: null }],
    ['proxySource that is not a string', { name: 'api', tools: [], proxySource: () => ({}) }],
    ['prelude that is not a string', { name: 'api', tools: [], prelude: {} }],
  ];

  it.each(cases)('names the position of %s', (_name, descriptor) => {
    expect(validateProviders([provider('first'), descriptor as ProviderDescriptor])).toBe(malformedText(1));
    expect(validateProviders([descriptor as ProviderDescriptor])).toBe(malformedText(0));
  });

  it('treats a hole in the list as malformed', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the malformed entry under test.
    expect(validateProviders([provider('a'), , provider('b')] as ProviderDescriptor[])).toBe(malformedText(1));
  });

  it('checks the shape before the name', () => {
    expect(validateProviders([{ name: 'Promise', tools: 'x' } as unknown as ProviderDescriptor])).toBe(
      malformedText(0),
    );
  });
});

describe('rejectName: the one walker both validations run, with the texts its caller brings', () => {
  const texts = {
    reserved: (name: string) => `reserved ${name}`,
    notIdentifier: (name: string) => `not an identifier ${name}`,
    reservedWord: (name: string) => `reserved word ${name}`,
    duplicate: (name: string) => `duplicate ${name}`,
  };

  it('answers each rule with the text of the table it was given', () => {
    const seen = new Set<string>();
    expect(rejectName('Promise', seen, texts)).toBe('reserved Promise');
    expect(rejectName('my-api', seen, texts)).toBe('not an identifier my-api');
    expect(rejectName('class', seen, texts)).toBe('reserved word class');
    expect(rejectName('gh', seen, texts)).toBeNull();
    expect(rejectName('gh', seen, texts)).toBe('duplicate gh');
  });

  it('records only the names it accepts, so one set carried across two lists finds a clash between them', () => {
    const seen = new Set<string>();
    expect(rejectName('class', seen, texts)).toBe('reserved word class');
    expect([...seen]).toEqual([]);
    expect(rejectName('api', seen, texts)).toBeNull();
    expect(rejectName('api', seen, providerRejection)).toBe(duplicateText('api'));
  });

  it('takes the reserved set from its caller, the protocol set by default', () => {
    expect(rejectName('WorkerEntrypoint', new Set(), texts)).toBeNull();
    expect(rejectName('WorkerEntrypoint', new Set(), texts, (name) => name === 'WorkerEntrypoint')).toBe(
      'reserved WorkerEntrypoint',
    );
    // A caller's reserved set replaces the default one: it is the caller's to include it.
    expect(rejectName('console', new Set(), texts, () => false)).toBeNull();
  });
});
