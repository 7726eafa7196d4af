/**
 * `npm run case -- <selector>... [--columns ...]`: a filter over the same engine the tests and the
 * matrix use. It loads the whole catalogue (so a duplicate id anywhere is refused here too), runs
 * the selected cases on the columns asked for, and prints each cell with its outcome and diff.
 * Exit code 0 when every cell is as expected, 1 when one is not, 2 on a bad selector or catalogue.
 */
import { resolve } from 'node:path';
import { COLUMN_IDS, type ColumnId, RESOLVED_COLUMNS } from '../columns.js';
import { Engine } from '../engine.js';
import { brief } from '../expect.js';
import { type CatalogueItem, caseTitle, loadCatalogue } from '../load-cases.js';
import { texts } from '../texts.js';
import { parseColumns, parseCommand, runCommand, stopOnSignals, UsageError } from './common.js';

/** The columns this command runs: the pinned ones (newest and compare are resolved by npm run matrix). */
const PINNED_COLUMNS = COLUMN_IDS.filter((id) => !(RESOLVED_COLUMNS as readonly string[]).includes(id));

const USAGE = `usage: npm run case -- <selector>... [--columns <ids>]

Runs the selected cases and prints every cell: its status, the outcome, and the diff when it fails.

  <selector>        a case id (args-spread-two), a pattern with * (args-*), or a case file
                    (cases/args.yaml); several may be given
  --columns <ids>   comma-separated, or all (default: ours); the columns are ${PINNED_COLUMNS.join(', ')}
  --cases <dir>     the catalogue directory (default: cases/)
  -h, --help        print this text

Exit code: 0 every cell as expected, 1 a fail or an infra-error, 2 a bad selector, option or case file.`;

function selects(selector: string, item: CatalogueItem): boolean {
  if (selector.endsWith('.yaml')) return resolve(item.file) === resolve(selector);
  const pattern = new RegExp(`^${selector.split('*').map(escapeRegExp).join('.*')}$`);
  return pattern.test(item.id);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The ids sharing the longest prefix with a selector that matched nothing, as suggestions. */
function nearest(selector: string, cases: readonly CatalogueItem[]): string[] {
  const shared = (id: string) => {
    let n = 0;
    while (n < id.length && id[n] === selector[n]) n += 1;
    return n;
  };
  const best = Math.max(0, ...cases.map((item) => shared(item.id)));
  return best < 3
    ? []
    : cases
        .filter((item) => shared(item.id) === best)
        .slice(0, 5)
        .map((item) => item.id);
}

runCommand(async () => {
  const { values, positionals } = parseCommand(
    process.argv.slice(2),
    { columns: { type: 'string' }, cases: { type: 'string' } },
    USAGE,
  );
  const columns: ColumnId[] = parseColumns(
    values.columns as string | undefined,
    ['ours'],
    PINNED_COLUMNS,
    PINNED_COLUMNS,
  );
  if (positionals.length === 0) throw new UsageError(texts.cli.noSelector(USAGE));
  const { cases, boundaries } = loadCatalogue(typeof values.cases === 'string' ? resolve(values.cases) : undefined);
  for (const selector of positionals)
    if (!cases.some((item) => selects(selector, item)))
      throw new UsageError(texts.cli.noMatch(selector, nearest(selector, cases)));
  const selected = cases.filter((item) => positionals.some((selector) => selects(selector, item)));

  const engine = new Engine(boundaries);
  stopOnSignals(engine, (line) => console.log(line));
  let failed = 0;
  const width = Math.max(...columns.map((column) => column.length));
  try {
    await engine.openAll(columns);
    for (const item of selected) {
      console.log(`\n${caseTitle(item)}  (${item.file}:${item.line})`);
      for (const column of columns) {
        if (engine.isAborted) return new Promise<number>(() => {}); // The signal handler exits.
        const { cell, outcome } = await engine.cell(item, column);
        const status = `${texts.statusSymbol[cell.status]} ${cell.status}${cell.label ? `: ${cell.label}` : ''}`;
        console.log(`  ${column.padEnd(width)}  ${status}${outcome ? `  ${brief(outcome)}` : ''}`);
        if (cell.status !== 'pass' && cell.reason) console.log(`  ${' '.repeat(width)}  ${cell.reason}`);
        if (cell.diff) console.log(cell.diff.replace(/^/gm, `  ${' '.repeat(width)}  `));
        if (cell.status === 'fail' || cell.status === 'infra-error') failed += 1;
      }
    }
  } finally {
    await engine.closeAll();
  }
  console.log(texts.cli.ranCases(selected.length, columns, failed));
  return failed === 0 ? 0 : 1;
});
