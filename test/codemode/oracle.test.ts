/**
 * normalizeCode and sanitizeToolName against upstream's own functions from the newest installed
 * release, over a generated corpus. Upstream's root entry imports `cloudflare:workers`, so its
 * helpers are imported from the dist chunk that defines them, which imports only acorn.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { normalizeCode } from '../../src/codemode/normalize.js';
import { sanitizeToolName, TOOL_NAME_RESERVED_WORDS } from '../../src/codemode/tool-name.js';
import { codeCorpus, toolNameCorpus } from './support/corpus.js';
import { loadUpstreamHelpers, type UpstreamHelpers, upstreamDist, upstreamVersion } from './support/upstream.js';

let upstream: UpstreamHelpers;

beforeAll(async () => {
  upstream = await loadUpstreamHelpers();
});

const corpus = codeCorpus();
const identical = corpus.filter((input) => !input.superset);
const supersets = corpus.filter((input) => input.superset);

describe(`the oracle: @cloudflare/codemode ${upstreamVersion()}`, () => {
  it('is the newest release, 0.5.6, loaded from a chunk that does not import cloudflare:workers', () => {
    expect(upstreamVersion()).toBe('0.5.6');
    const source = readFileSync(join(upstreamDist(), upstream.chunk), 'utf8');
    expect(source).not.toContain('cloudflare:workers');
    // The helpers are live functions of the chunk, not stand-ins.
    expect(upstream.normalizeCode('1 + 2')).toBe('async () => {\nreturn (1 + 2)\n}');
    expect(upstream.sanitizeToolName('list-issues')).toBe('list_issues');
  });

  it('covers a few hundred model-shaped inputs', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    expect(new Set(corpus.map((input) => input.code)).size).toBe(corpus.length);
  });
});

describe('normalizeCode equals upstream', () => {
  it.each(identical.map((input) => [input.label, input.code] as const))('%s', (_label, code) => {
    expect(normalizeCode(code)).toBe(upstream.normalizeCode(code));
  });
});

describe('normalizeCode differs from upstream only by the deliberate superset', () => {
  it.each(supersets.map((input) => [input.label, input] as const))(
    'import block kept ahead of the arrow: %s',
    (_label, input) => {
      const { importBlock, body } = input.superset!;
      const ours = normalizeCode(input.code);
      const theirs = upstream.normalizeCode(input.code);
      expect(ours).not.toBe(theirs);
      // Upstream wraps the import into the arrow's body, where an import cannot appear.
      expect(theirs.startsWith(`async () => {\n${importBlock}`)).toBe(true);
      expect(ours).toBe(`${importBlock}\n${upstream.normalizeCode(body)}`);
    },
  );

  it('and in no other input', () => {
    const differing = corpus.filter((input) => normalizeCode(input.code) !== upstream.normalizeCode(input.code));
    expect(differing.map((input) => input.label)).toEqual(supersets.map((input) => input.label));
  });
});

describe('sanitizeToolName equals upstream', () => {
  const names = toolNameCorpus(TOOL_NAME_RESERVED_WORDS);

  it('over a corpus of free-form tool names', () => {
    expect(names.length).toBeGreaterThanOrEqual(300);
    const mismatches = names.filter((name) => sanitizeToolName(name) !== upstream.sanitizeToolName(name));
    expect(mismatches).toEqual([]);
  });

  it('with the reserved set of the chunk, word for word', () => {
    const source = readFileSync(join(upstreamDist(), upstream.chunk), 'utf8');
    const literal = /new Set\(\[([^\]]*"synchronized"[^\]]*)\]\)/.exec(source);
    expect(literal).not.toBeNull();
    const words = JSON.parse(`[${literal![1]!.replace(/,\s*$/, '')}]`) as string[];
    expect(words).toHaveLength(65);
    expect([...TOOL_NAME_RESERVED_WORDS]).toEqual(words);
  });
});
