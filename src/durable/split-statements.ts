/**
 * Splits a query at the semicolons that end statements, so `sql.exec` can run every statement of
 * a multi-statement query as Cloudflare's does (the binding prepares only the first one). A
 * semicolon inside a string, a quoted name or a comment ends nothing. A semicolon inside a
 * trigger body is not told apart here: the caller joins pieces until SQLite accepts them as one
 * complete statement.
 */
export function splitAtSemicolons(query: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let i = 0;
  while (i < query.length) {
    const char = query[i];
    if (char === "'" || char === '"' || char === '`') {
      i = skipQuoted(query, i, char);
    } else if (char === '[') {
      const end = query.indexOf(']', i + 1);
      i = end === -1 ? query.length : end + 1;
    } else if (char === '-' && query[i + 1] === '-') {
      const end = query.indexOf('\n', i + 2);
      i = end === -1 ? query.length : end + 1;
    } else if (char === '/' && query[i + 1] === '*') {
      const end = query.indexOf('*/', i + 2);
      i = end === -1 ? query.length : end + 2;
    } else if (char === ';') {
      pieces.push(query.slice(start, i + 1));
      start = i + 1;
      i++;
    } else {
      i++;
    }
  }
  if (start < query.length) pieces.push(query.slice(start));
  return pieces;
}

/** The index after a quoted run starting at `open`; a doubled quote is an escaped one. */
function skipQuoted(query: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < query.length) {
    if (query[i] === quote) {
      if (query[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return query.length;
}
