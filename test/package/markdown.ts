/**
 * Reads the parts of a Markdown page the package test runs or checks: its fenced code blocks (a
 * TypeScript block and the output it `prints`) and its relative links.
 */

interface FencedBlock {
  /** The info string's first word (`ts`, `sh`, or `''` for a bare fence). */
  lang: string;
  /** The info string's other words (`worker` marks a snippet that is type-checked, not run). */
  tags: string[];
  body: string;
  /** The prose between the previous block and this one. */
  before: string;
}

export interface Snippet {
  source: string;
  /** A Worker's code: type-checked, not run in Node. */
  typeCheckOnly: boolean;
  /** What the page says it prints: the bare fence that follows it after the word "prints". */
  prints: string | undefined;
}

/** The page's fenced blocks in order, and the prose after the last one. */
function readPage(markdown: string): { blocks: FencedBlock[]; trailing: string } {
  const blocks: FencedBlock[] = [];
  let open: { fence: string; lang: string; tags: string[]; lines: string[] } | undefined;
  let prose: string[] = [];
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.trimEnd() === open.fence) {
        blocks.push({ lang: open.lang, tags: open.tags, body: open.lines.join('\n'), before: prose.join('\n') });
        open = undefined;
        prose = [];
      } else open.lines.push(line);
      continue;
    }
    const fence = /^(`{3,})(.*)$/.exec(line);
    if (fence) {
      const [lang = '', ...tags] = fence[2]!.trim().split(/\s+/).filter(Boolean);
      open = { fence: fence[1]!, lang, tags, lines: [] };
    } else prose.push(line);
  }
  if (open) throw new Error(`An unclosed ${open.fence}${open.lang} fence`);
  return { blocks, trailing: prose.join('\n') };
}

/** Every TypeScript block but a `worker-host` one, with the output the page says it prints. */
export function typeScriptSnippets(markdown: string): Snippet[] {
  const { blocks } = readPage(markdown);
  return blocks.flatMap((block, index) => {
    // A Durable Object host needs wrangler dev: test/hosts/worker-host.test.ts runs it there.
    if (block.lang !== 'ts' || block.tags.includes('worker-host')) return [];
    const next = blocks[index + 1];
    const prints = next && next.lang === '' && next.before.trim() === 'prints' ? next.body : undefined;
    return [{ source: block.body, typeCheckOnly: block.tags.includes('worker'), prints }];
  });
}

export interface NamedFile {
  /** The file name the block's info string gives (```ts host.ts). */
  name: string;
  body: string;
  /** What the page says running it prints: the bare fence that follows after prose ending in "prints". */
  prints: string | undefined;
}

/** The page's blocks that name the file they are (```json tsconfig.json), in page order. */
export function namedFiles(markdown: string): NamedFile[] {
  const { blocks } = readPage(markdown);
  return blocks.flatMap((block, index) => {
    const [name] = block.tags;
    if (name === undefined || !/^[\w.-]+\.[a-z]+$/.test(name)) return [];
    const next = blocks[index + 1];
    const prints = next && next.lang === '' && /\bprints$/.test(next.before.trim()) ? next.body : undefined;
    return [{ name, body: block.body, prints }];
  });
}

/** The body of the page's first TypeScript block tagged `tag` (```ts worker-host), if any. */
export function taggedSnippet(markdown: string, tag: string): string | undefined {
  return readPage(markdown).blocks.find((block) => block.lang === 'ts' && block.tags.includes(tag))?.body;
}

/** The targets of the page's relative links (`[text](target)` outside code), without their `#fragment`. */
export function relativeLinks(markdown: string): string[] {
  const { blocks, trailing } = readPage(markdown);
  const prose = [...blocks.map((block) => block.before), trailing].join('\n').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]!);
}

/** The lines of the page's `sh` blocks, without comments. */
export function shellLines(markdown: string): string[] {
  return readPage(markdown)
    .blocks.filter((block) => block.lang === 'sh')
    .flatMap((block) => block.body.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The part of a page under the `## <heading>` heading, up to the next `## ` heading. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`The page has no "## ${heading}" heading`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}
