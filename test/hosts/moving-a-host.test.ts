/**
 * docs/moving-a-host.md stays true to the catalogue: every case it cites exists, every case where
 * upstream differs on purpose or that the reference cannot run is accounted for there, and each
 * case in the difference table is one that differs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isFlow, referenceRefusal } from '../../harness/judge.js';
import { loadCatalogue } from '../../harness/load-cases.js';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/moving-a-host.md', import.meta.url)), 'utf8');
const catalogue = loadCatalogue().cases;
const ids = catalogue.map((item) => item.id);
/** A case id's first word (`validation`, `dispatch`, ...): a backticked token opening with one is a citation. */
const families = new Set(ids.map((id) => id.split('-')[0]!));

/** A case where upstream's outcome differs on purpose, or that only ours can run. */
function differs(item: (typeof catalogue)[number]): boolean {
  if (isFlow(item)) return false;
  return item.upstream !== undefined || referenceRefusal(item) !== undefined;
}

/** The ids a citation names: itself, or every id a trailing `*` pattern matches. */
function citedIds(citation: string): string[] {
  return citation.endsWith('*')
    ? ids.filter((id) => id.startsWith(citation.slice(0, -1)))
    : ids.filter((id) => id === citation);
}

function citations(text: string): string[] {
  return [...text.matchAll(/`([a-z0-9]+(?:-[a-z0-9*]+)+)`/g)]
    .map((match) => match[1]!)
    .filter((token) => families.has(token.split('-')[0]!));
}

/** The rows of the table under a heading, as arrays of cells. */
function tableRows(heading: string): string[][] {
  const section = PAGE.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0];
  if (section === undefined) throw new Error(`docs/moving-a-host.md has no section "${heading}"`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| difference') && !line.startsWith('|---'))
    .map((line) => line.slice(2, -2).split(' | '));
}

describe('docs/moving-a-host.md', () => {
  it('cites only cases of the catalogue', () => {
    const unknown = citations(PAGE).filter((citation) => citedIds(citation).length === 0);
    expect(unknown).toEqual([]);
  });

  it('accounts for every case where upstream differs on purpose, or that the reference cannot run', () => {
    const covered = new Set(citations(PAGE).flatMap(citedIds));
    const differing = catalogue.filter(differs).map((item) => item.id);
    expect(differing.length).toBeGreaterThan(0);
    expect(differing.filter((id) => !covered.has(id))).toEqual([]);
  });

  it('cites in the difference table only cases that differ from upstream', () => {
    const rows = tableRows('Every deliberate difference');
    expect(rows.length).toBeGreaterThan(5);
    const byId = new Map(catalogue.map((item) => [item.id, item]));
    for (const cells of rows) {
      for (const id of citations(cells.at(-1) ?? '').flatMap(citedIds)) {
        const item = byId.get(id);
        expect(item !== undefined && differs(item), id).toBe(true);
      }
    }
  });
});
