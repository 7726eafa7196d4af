/**
 * The source texts workerd runs: the supervisor worker, the value codec module it imports, and
 * the harness module of every execution. The two worker files are assets beside this module
 * (`worker/*.js`, copied into dist/ by scripts/copy-assets.mjs), read once and completed here with
 * the protocol's binary codec, our value codec and the texts they throw.
 */
import { readFileSync } from 'node:fs';
import { BINARY_CODEC_SOURCE } from '../protocol/codec.js';
import { HANDLE_KEY } from '../protocol/types.js';
import { VALUE_CODEC_SOURCE } from '../protocol/value-codec.js';
import { isolateText } from './texts.js';

export interface SandboxSources {
  supervisor: string;
  valueCodecModule: string;
  harness: string;
}

let cached: SandboxSources | undefined;

function readAsset(name: string): string {
  return readFileSync(new URL(`./worker/${name}`, import.meta.url), 'utf8');
}

function fill(source: string, marker: string, replacement: string): string {
  const token = `/*@${marker}@*/ null`;
  if (!source.includes(token)) throw new Error(`worker asset is missing the marker ${token}`);
  // A function replacement, so `$` sequences in the inserted source are taken literally.
  return source.replace(token, () => replacement);
}

export function sandboxSources(): SandboxSources {
  if (cached !== undefined) return cached;
  const harnessSettings = { handleKey: HANDLE_KEY, proxySourceNotObject: isolateText.proxySourceNotObject('{name}') };
  let harness = readAsset('harness.js');
  harness = fill(harness, 'SETTINGS', JSON.stringify(harnessSettings));
  harness = fill(harness, 'BINARY_CODEC', BINARY_CODEC_SOURCE);
  cached = {
    supervisor: readAsset('supervisor.js'),
    valueCodecModule: `export default ${VALUE_CODEC_SOURCE};\n`,
    harness,
  };
  return cached;
}
