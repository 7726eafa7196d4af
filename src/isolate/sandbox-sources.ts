/**
 * The source texts workerd runs: the supervisor worker, the modules it imports (the value codec,
 * the channel grammar, the relay codec, the expanded-size measure: each the source of one self-contained TypeScript
 * function, so host and supervisor run one implementation), and the harness module of every
 * execution. The two worker files are assets beside this module (`worker/*.js`, copied into dist/
 * by scripts/copy-assets.mjs), read once and completed here with the protocol's binary codec and
 * the texts they throw.
 */
import { readFileSync } from 'node:fs';
import { BINARY_CODEC_SOURCE } from '../protocol/codec.js';
import { HANDLE_KEY } from '../protocol/types.js';
import { VALUE_CODEC_SOURCE } from '../protocol/value-codec.js';
import { CHANNEL_GRAMMAR_SOURCE } from './channel.js';
import { EXPANDED_SIZE_SOURCE } from './expanded-size.js';
import { RELAY_CODEC_SOURCE } from './relay-frame.js';
import { isolateText } from './texts.js';
import type { HarnessSettings, SandboxLimits } from './worker-settings.js';

export interface SandboxSources {
  supervisor: string;
  valueCodecModule: string;
  channelGrammarModule: string;
  relayCodecModule: string;
  expandedSizeModule: string;
  /** The harness module, with its member's caps still to bake in (`harnessWithLimits`). */
  harness: string;
}

let cached: SandboxSources | undefined;

function readAsset(name: string): string {
  return readFileSync(new URL(`./worker/${name}`, import.meta.url), 'utf8');
}

/** Replaces the one occurrence of a placeholder (`__NAME__`, declared in worker/worker.d.ts). */
function fill(source: string, placeholder: string, replacement: string): string {
  const token = `__${placeholder}__`;
  if (source.split(token).length !== 2) throw new Error(`worker asset must hold the placeholder ${token} once`);
  // A function replacement, so `$` sequences in the inserted source are taken literally.
  return source.replace(token, () => `(${replacement})`);
}

/** A member's harness: the caps go into the source, where no program can reach them. */
export function harnessWithLimits(sources: SandboxSources, limits: SandboxLimits): string {
  return fill(sources.harness, 'SANDBOX_LIMITS', JSON.stringify(limits));
}

export function sandboxSources(): SandboxSources {
  if (cached !== undefined) return cached;
  const harnessSettings: HarnessSettings = {
    handleKey: HANDLE_KEY,
    proxySourceNotObject: isolateText.proxySourceNotObject('{name}'),
  };
  let harness = readAsset('harness.js');
  harness = fill(harness, 'HARNESS_SETTINGS', JSON.stringify(harnessSettings));
  harness = fill(harness, 'BINARY_CODEC', BINARY_CODEC_SOURCE);
  cached = {
    supervisor: readAsset('supervisor.js'),
    valueCodecModule: `export default ${VALUE_CODEC_SOURCE};\n`,
    channelGrammarModule: `export default ${CHANNEL_GRAMMAR_SOURCE};\n`,
    relayCodecModule: `export default ${RELAY_CODEC_SOURCE};\n`,
    expandedSizeModule: `export default ${EXPANDED_SIZE_SOURCE};\n`,
    harness,
  };
  return cached;
}
