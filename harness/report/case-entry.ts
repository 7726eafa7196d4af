/** A loaded case as the report names it: repository-relative file, area = the file stem. */
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import type { LoadedCase } from '../case-model.js';
import type { MatrixCase } from './model.js';

/** The loader names files relative to the working directory (or absolute); the report names them from the repository root. */
export function repoRelative(file: string, repoRoot: string): string {
  const absolute = isAbsolute(file) ? file : resolve(process.cwd(), file);
  return relative(repoRoot, absolute).split(sep).join('/');
}

export function areaOf(file: string): string {
  return basename(file).replace(/\.ya?ml$/i, '');
}

export function toMatrixCase(loaded: LoadedCase, repoRoot: string): MatrixCase {
  const file = repoRelative(loaded.file, repoRoot);
  return {
    id: loaded.id,
    file,
    line: loaded.line,
    area: areaOf(file),
    description: loaded.description,
    features: [...loaded.features],
  };
}

/** Catalogue order: files by name, then cases by line, so every writer lists them the same way. */
export function catalogueOrder<T extends { file: string; line: number }>(cases: readonly T[]): T[] {
  return [...cases].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
}
