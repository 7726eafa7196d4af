/**
 * `reports/index.html`: one self-contained static page. The template, stylesheet and script in
 * `page/` are inlined with the run and its transitions, so the page opens from the file system
 * with no server and no network.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Transition } from './history.js';
import type { MatrixRun } from './model.js';
import { CELL_STATUSES } from './model.js';
import { texts } from './texts.js';

const PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'page');

/** Transitions beyond this many (newest first) are left off the page; history/ keeps them all. */
const PAGE_TRANSITION_LIMIT = 200;

/** JSON that is safe inside a `<script>` element: no `</script>`, no `<!--`. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Substitutes every `{{NAME}}` once, in one pass, so inserted text is never re-scanned for placeholders. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z]+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`page template: no value for ${whole}`);
    return value;
  });
}

export function renderIndexHtml(run: MatrixRun, transitions: readonly Transition[]): string {
  const read = (name: string) => readFileSync(join(PAGE_DIR, name), 'utf8');
  const data = {
    run,
    transitions: transitions.slice(0, PAGE_TRANSITION_LIMIT),
    ui: {
      statuses: CELL_STATUSES,
      labels: texts.statusLabel,
      symbols: texts.statusSymbol,
      meanings: texts.statusMeaning,
      probeNotes: texts.probeNote,
      staleMark: texts.staleMark,
      columnDidNotRun: texts.columnDidNotRun,
    },
  };
  return fill(read('template.html'), {
    TITLE: escapeHtml(`Compatibility matrix · ${run.run.date}`),
    STYLE: read('page.css'),
    // The script is inlined verbatim; it holds no `</script>` by construction (checked here).
    SCRIPT: guardScript(read('page.js')),
    DATA: scriptSafeJson(data),
  });
}

function guardScript(source: string): string {
  if (/<\/script/i.test(source)) throw new Error('page/page.js must not contain "</script"');
  return source;
}
