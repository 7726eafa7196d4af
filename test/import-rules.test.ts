/**
 * The import rules `npm run lint` checks (.dependency-cruiser.mjs), each against an import planted
 * to break it in a scratch tree: every rule fires on its own violation, and the imports the design
 * allows (down the host's floors, into the contract) pass. The runtime-neutral folders' own
 * tsconfig (tsconfig.neutral.json, which `npm run typecheck` runs) is held the same way: a Node
 * type planted in each folder it covers is an error.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cruise, type ICruiseOptions, type IFlattenedRuleSet } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

/** The rules as `npm run lint` reads them (a plain module, so loaded by its URL). */
const rules = (
  (await import(String(new URL('../.dependency-cruiser.mjs', import.meta.url)))) as {
    default: Required<Pick<IFlattenedRuleSet, 'forbidden'>> & {
      options: Pick<ICruiseOptions, 'doNotFollow' | 'exclude'>;
    };
  }
).default;

const scratch = mkdtempSync(join(tmpdir(), 'import-rules-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The folders `npm run lint:imports` cruises, as its script names them. */
const CRUISED = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
).scripts['lint:imports']!.split(' --')[0]!
  .split(' ')
  .slice(1);

/** Writes the tree and answers every violation, as `rule: from -> to`. */
async function violations(tree: Record<string, string>): Promise<string[]> {
  const base = mkdtempSync(join(scratch, 'tree-'));
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), text);
  }
  // Every folder cruised exists, planted in or not.
  for (const folder of CRUISED) mkdirSync(join(base, folder), { recursive: true });
  const { output } = await cruise(CRUISED, {
    baseDir: base,
    validate: true,
    ruleSet: { forbidden: rules.forbidden },
    tsPreCompilationDeps: true,
    ...rules.options,
  });
  const result = typeof output === 'string' ? JSON.parse(output) : output;
  return result.summary.violations.map(
    (violation: { rule: { name: string }; from: string; to: string }) =>
      `${violation.rule.name}: ${violation.from} -> ${violation.to}`,
  );
}

const exported = (name: string) => `export const ${name} = 1;\n`;
const importing = (from: string, name: string) => `import { ${name} } from '${from}';\nexport const use = ${name};\n`;

describe('the import rules', () => {
  it('refuse each planted violation, by the rule it breaks (a circle once)', async () => {
    const found = await violations({
      'src/wire/first.ts': "import { second } from './second.js';\nexport const first = () => second;\n",
      'src/wire/second.ts': "import { first } from './first.js';\nexport const second = () => first;\n",
      'harness/report/first.ts': "import { second } from './second.js';\nexport const first = () => second;\n",
      'harness/report/second.ts': "import { first } from './first.js';\nexport const second = () => first;\n",
      'src/isolate/workerd/reaches-host.ts': importing('../host/run/run-part.js', 'runPart'),
      'src/isolate/host/run/run-part.ts': exported('runPart'),
      'src/isolate/host/member/reaches-workerd.ts': importing('../../workerd/worker-part.js', 'workerPart'),
      'src/isolate/workerd/worker-part.ts': exported('workerPart'),
      'src/isolate/contract/reaches-wing.ts': importing('../host/options/option-part.js', 'optionPart'),
      'src/isolate/host/options/option-part.ts': exported('optionPart'),
      'src/isolate/host/relay/reaches-up.ts': importing('../pool/pool-part.js', 'poolPart'),
      'src/isolate/host/pool/pool-part.ts': exported('poolPart'),
      'src/protocol/reaches-node.ts': "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
      'src/codemode/reaches-server.ts': importing('../server/server-part.js', 'serverPart'),
      'src/server/server-part.ts': exported('serverPart'),
      'src/server/reaches-pool.ts': importing('../isolate/host/pool/pool-part.js', 'poolPart'),
      'src/remote/reaches-contract.ts': importing('../isolate/contract/contract-part.js', 'contractPart'),
      'src/isolate/contract/contract-part.ts': exported('contractPart'),
    });
    expect(found.sort()).toEqual(
      [
        'no-circular: src/wire/first.ts -> src/wire/second.ts',
        'no-circular: harness/report/first.ts -> harness/report/second.ts',
        'isolate-workerd-to-host: src/isolate/workerd/reaches-host.ts -> src/isolate/host/run/run-part.ts',
        'node-code-from-neutral-code: src/isolate/workerd/reaches-host.ts -> src/isolate/host/run/run-part.ts',
        'isolate-host-to-workerd: src/isolate/host/member/reaches-workerd.ts -> src/isolate/workerd/worker-part.ts',
        'isolate-contract-to-wing: src/isolate/contract/reaches-wing.ts -> src/isolate/host/options/option-part.ts',
        'node-code-from-neutral-code: src/isolate/contract/reaches-wing.ts -> src/isolate/host/options/option-part.ts',
        'isolate-host-confinement-relay-sandbox-upward: src/isolate/host/relay/reaches-up.ts -> src/isolate/host/pool/pool-part.ts',
        'node-builtin-outside-node-code: src/protocol/reaches-node.ts -> fs',
        'node-code-from-neutral-code: src/codemode/reaches-server.ts -> src/server/server-part.ts',
        'src-codemode-record-upward: src/codemode/reaches-server.ts -> src/server/server-part.ts',
        'isolate-through-its-entries: src/server/reaches-pool.ts -> src/isolate/host/pool/pool-part.ts',
        'isolate-through-its-entries: src/remote/reaches-contract.ts -> src/isolate/contract/contract-part.ts',
      ].sort(),
    );
  });

  it('refuse an import up the floors of src/, from each floor below the top', async () => {
    const found = await violations({
      'src/server/server-part.ts': exported('serverPart'),
      'src/bundle/reaches-server.ts': importing('../server/server-part.js', 'serverPart'),
      'src/remote/remote-part.ts': exported('remotePart'),
      'src/record/reaches-remote.ts': importing('../remote/remote-part.js', 'remotePart'),
      'src/codemode/codemode-part.ts': exported('codemodePart'),
      'src/events/reaches-codemode.ts': importing('../codemode/codemode-part.js', 'codemodePart'),
      'src/events/events-part.ts': exported('eventsPart'),
      'src/wire/reaches-events.ts': importing('../events/events-part.js', 'eventsPart'),
      'src/tracing/tracing-part.ts': exported('tracingPart'),
      'src/protocol/reaches-tracing.ts': importing('../tracing/tracing-part.js', 'tracingPart'),
    });
    expect(found.sort()).toEqual(
      [
        'src-bundle-isolate-remote-upward: src/bundle/reaches-server.ts -> src/server/server-part.ts',
        'src-codemode-record-upward: src/record/reaches-remote.ts -> src/remote/remote-part.ts',
        'src-events-upward: src/events/reaches-codemode.ts -> src/codemode/codemode-part.ts',
        'src-tracing-wire-upward: src/wire/reaches-events.ts -> src/events/events-part.ts',
        'src-protocol-upward: src/protocol/reaches-tracing.ts -> src/tracing/tracing-part.ts',
      ].sort(),
    );
  });

  it('let the imports the design allows pass', async () => {
    const found = await violations({
      'src/isolate/host/executor/top.ts': importing('../pool/pool-part.js', 'poolPart'),
      'src/isolate/host/pool/pool-part.ts': importing('../../contract/shared.js', 'shared'),
      'src/isolate/workerd/worker-part.ts': importing('../contract/shared.js', 'shared'),
      'src/isolate/contract/shared.ts': importing('../../protocol/types.js', 'types'),
      'src/protocol/types.ts': exported('types'),
      'src/server/server-part.ts': "import { createServer } from 'node:http';\nexport const serve = createServer;\n",
      // Down the floors of src/, and across one floor: the dialect and its record import each other.
      'src/server/down.ts': importing('../remote/remote-part.js', 'remotePart'),
      'src/remote/remote-part.ts': importing('../wire/wire-part.js', 'wirePart'),
      'src/wire/wire-part.ts': importing('../protocol/types.js', 'types'),
      'src/record/replay-part.ts': importing('../codemode/codemode-part.js', 'codemodePart'),
      'src/codemode/codemode-part.ts': importing('../events/events-part.js', 'eventsPart'),
      'src/events/events-part.ts': importing('../tracing/tracing-part.js', 'tracingPart'),
      'src/tracing/tracing-part.ts': exported('tracingPart'),
      'src/index.ts': importing('./codemode/codemode-part.js', 'codemodePart'),
      // Into src/isolate through its entries.
      'src/server/through-entries.ts': `${importing('../isolate/index.js', 'executor')}${importing('../isolate/daemon.js', 'forDaemon').replace('use', 'useToo')}`,
      'src/isolate/index.ts': `export { poolPart as executor } from './host/pool/pool-part.js';\n`,
      'src/isolate/daemon.ts': `export { shared as forDaemon } from './contract/shared.js';\n`,
    });
    expect(found).toEqual([]);
  });
});

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The folders (and files) tsconfig.neutral.json covers, as it lists them. */
function neutralIncludes(): string[] {
  // The tsconfig is JSON with comments: drop the comment lines before parsing.
  const text = readFileSync(join(ROOT, 'tsconfig.neutral.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  return (JSON.parse(text) as { include: string[] }).include;
}

/** Type-checks a scratch tree under the repository's neutral tsconfig; answers tsc's error lines. */
async function neutralTypeErrors(tree: Record<string, string>): Promise<string[]> {
  const base = mkdtempSync(join(scratch, 'neutral-'));
  for (const config of ['tsconfig.json', 'tsconfig.neutral.json']) copyFileSync(join(ROOT, config), join(base, config));
  writeFileSync(join(base, 'package.json'), '{ "type": "module" }\n');
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), text);
  }
  const output = await promisify(execFile)(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.neutral.json'], {
    cwd: base,
  }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  return output.split('\n').filter((line) => /error TS\d+/.test(line));
}

/** A module that leans on Node's types: its Buffer, its process, its timer type. */
const NODE_TYPED = [
  "export const bytes = Buffer.byteLength('x');",
  'export const env = process.env;',
  'export let timer: NodeJS.Timeout | undefined;',
  '',
].join('\n');
/** The same jobs through the web platform, which every runtime has. */
const WEB_TYPED = [
  "export const bytes = new TextEncoder().encode('x').byteLength;",
  "export const url = new URL('https://example.com').host;",
  'export let timer: ReturnType<typeof setTimeout> | undefined;',
  '',
].join('\n');

describe('the runtime-neutral folders', () => {
  const folders = neutralIncludes().filter((path) => !path.endsWith('.ts'));

  it('are every folder the root entry reaches and the wire, each type-checked without Node', () => {
    expect(folders).toEqual(
      expect.arrayContaining(['src/protocol', 'src/codemode', 'src/record', 'src/remote', 'src/wire']),
    );
  });

  it('refuse a Node type planted in each of them, and take the web platform', async () => {
    const tree: Record<string, string> = {};
    for (const folder of folders) {
      tree[`${folder}/planted-node.ts`] = NODE_TYPED;
      tree[`${folder}/planted-web.ts`] = WEB_TYPED;
    }
    const errors = await neutralTypeErrors(tree);
    const expected = folders.flatMap((folder) =>
      ['Buffer', 'process', 'NodeJS'].map((name, index) =>
        expect.stringMatching(
          new RegExp(
            `^${folder}/planted-node\\.ts\\(${index + 1},\\d+\\): error TS\\d+: Cannot find (name|namespace) '${name}'`,
          ),
        ),
      ),
    );
    expect(errors).toEqual(expect.arrayContaining(expected));
    expect(errors).toHaveLength(expected.length);
  });
});
