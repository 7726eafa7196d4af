/**
 * History as a trend: per column, the pass, fail, skip and infra-error counts over the recorded
 * runs, drawn as inline SVG (no script, no network); and per case, its recent runs as a strip of
 * statuses, the worst of its columns in each run.
 */
import type { HistoryRecord } from './history.js';
import type { CellStatus } from './model.js';

/** How many runs the chart and the strips show, newest last. */
const TREND_RUNS = 30;
const STRIP_RUNS = 10;

const STATUS_OF: Record<string, CellStatus> = { p: 'pass', f: 'fail', s: 'skip', u: 'unsupported', i: 'infra-error' };
/** The series the chart draws, with their colours (the page's status colours). */
const SERIES = [
  { letter: 'p', status: 'pass', colour: '#1a7f37' },
  { letter: 'f', status: 'fail', colour: '#cf222e' },
  { letter: 's', status: 'skip', colour: '#6e7781' },
  { letter: 'i', status: 'infra-error', colour: '#bc4c00' },
] as const;
/** A run's status for a case, worst first. */
const WORST = ['f', 'i', 'p', 's', 'u'] as const;

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const ordered = (records: readonly HistoryRecord[], runs: number) =>
  [...records].sort((a, b) => a.date.localeCompare(b.date)).slice(-runs);

/** Per column id: the counts of each series in each run, oldest first (0 where the run lacked the column). */
function countsByColumn(records: readonly HistoryRecord[], columns: readonly string[]) {
  return columns.map((column) => ({
    column,
    runs: records.map((record) => {
      const position = record.columns.findIndex((entry) => entry.id === column);
      const counts: Record<string, number> = { p: 0, f: 0, s: 0, i: 0 };
      if (position >= 0)
        for (const letters of Object.values(record.cases)) {
          const letter = letters[position] ?? '-';
          if (letter in counts) counts[letter] = (counts[letter] ?? 0) + 1;
        }
      return counts;
    }),
  }));
}

/** One small chart per column: a line per series over the runs. Empty when fewer than two runs are recorded. */
export function trendSvg(records: readonly HistoryRecord[], columns: readonly { id: string; label: string }[]): string {
  const runs = ordered(records, TREND_RUNS);
  if (runs.length < 2) return '';
  const [width, height, pad] = [180, 70, 4];
  const x = (index: number) => pad + (index * (width - 2 * pad)) / (runs.length - 1);
  const charts = countsByColumn(
    runs,
    columns.map((column) => column.id),
  ).map(({ column, runs: counts }, index) => {
    const max = Math.max(1, ...counts.flatMap((entry) => Object.values(entry)));
    const y = (value: number) => height - pad - (value * (height - 2 * pad)) / max;
    const lines = SERIES.map(({ letter, status, colour }) => {
      const points = counts.map((entry, run) => `${x(run).toFixed(1)},${y(entry[letter] ?? 0).toFixed(1)}`).join(' ');
      const last = counts.at(-1)?.[letter] ?? 0;
      return `<polyline class="trend-${status}" fill="none" stroke="${colour}" stroke-width="1.5" points="${points}"><title>${escapeXml(`${status}: ${counts.map((entry) => entry[letter] ?? 0).join(', ')} (now ${last})`)}</title></polyline>`;
    }).join('');
    const label = escapeXml(columns[index]?.label ?? column);
    return `<figure class="trend" data-column="${escapeXml(column)}"><svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" aria-label="${label}: pass, fail, skip and infra-error over ${runs.length} runs"><rect x="0" y="0" width="${width}" height="${height}" fill="none" stroke="#ddd"/>${lines}</svg><figcaption>${label}</figcaption></figure>`;
  });
  return charts.join('');
}

/** Per case, its status in each of the recent runs (the worst of its columns), oldest first; `none` where it had no cell. */
export function caseStrips(records: readonly HistoryRecord[]): {
  dates: string[];
  strips: Record<string, Array<CellStatus | 'none'>>;
} {
  const runs = ordered(records, STRIP_RUNS);
  const ids = new Set(runs.flatMap((record) => Object.keys(record.cases)));
  const strips: Record<string, Array<CellStatus | 'none'>> = {};
  for (const id of ids)
    strips[id] = runs.map((record) => {
      const letters = record.cases[id] ?? '';
      const worst = WORST.find((letter) => letters.includes(letter));
      return worst ? (STATUS_OF[worst] as CellStatus) : 'none';
    });
  return { dates: runs.map((record) => record.date), strips };
}
