/** Small formatting helpers shared by the markdown, badge and progress writers. */
import type { ColumnSummary, ColumnVersions, MatrixColumn } from './model.js';

export function countsLine(summary: ColumnSummary): string {
  const parts = [
    `${summary.pass} pass`,
    `${summary.fail} fail`,
    `${summary.skip} skip`,
    `${summary.unsupported} unsupported`,
    `${summary.infraError} infra-error`,
  ];
  if (summary.unexpectedPass) parts.push(`(${summary.unexpectedPass} of the failures are stale skips)`);
  return parts.join(' · ');
}

/** `codemode 0.5.6 · workerd 1.20260426.1 · wrangler 4.86.0 · 2025-06-01 [nodejs_compat]`, leaving out what takes no part. */
export function versionsLine(versions: ColumnVersions): string {
  const parts: string[] = [];
  if (versions.executor) parts.push(`executor ${versions.executor}`);
  if (versions.codemode) parts.push(`codemode ${versions.codemode}`);
  if (versions.workerd) parts.push(`workerd ${versions.workerd}`);
  if (versions.wrangler) parts.push(`wrangler ${versions.wrangler}`);
  if (versions.compatibilityDate) parts.push(`compat ${versions.compatibilityDate}`);
  if (versions.compatibilityFlags.length) parts.push(`flags ${versions.compatibilityFlags.join(', ')}`);
  return parts.join(' · ');
}

/** A cell of a markdown table: pipes escaped, line breaks flattened. */
export function markdownCell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').trim();
}

/** Inline code that survives backticks inside the text. */
export function markdownCode(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  return `${fence}${fence === '``' ? ' ' : ''}${text}${fence === '``' ? ' ' : ''}${fence}`;
}

export function columnById(columns: readonly MatrixColumn[], id: string): MatrixColumn | undefined {
  return columns.find((column) => column.id === id);
}
