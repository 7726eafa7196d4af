/**
 * Our codec and envelope against upstream's own code, as shipped in the installed releases.
 *
 * Upstream's codec cannot be imported: it lives in `dist/index.js`, which imports
 * `cloudflare:workers` (not loadable in Node) and exports neither the codec functions nor the
 * sandbox codec text. So these tests cut the three pieces out of that file's text, unchanged, and
 * evaluate them on their own: the host codec (`stringifyForCodemode` / `parseForCodemode`), the
 * sandbox codec (`SANDBOX_CODEC`, the text upstream injects into its worker), and `ToolDispatcher`
 * (its host-side dispatch), whose only outside name, `RpcTarget`, is a marker base class.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BINARY_CODEC_SOURCE,
  type BinaryCodec,
  binaryCodec,
  createEnvelopeDispatch,
  ToolNotFoundError,
} from '../../src/protocol/index.js';

interface UpstreamDispatcher {
  call(name: string, argsJson: string): Promise<string>;
}

interface Upstream {
  release: string;
  host: BinaryCodec;
  sandbox: BinaryCodec;
  dispatcher(fns: Record<string, (...args: unknown[]) => unknown>): UpstreamDispatcher;
}

function between(text: string, start: string, end: string, file: string): string {
  const from = text.indexOf(start);
  const to = from < 0 ? -1 : text.indexOf(end, from + start.length);
  if (from < 0 || to < 0) throw new Error(`${file}: cannot find ${JSON.stringify(start)} … ${JSON.stringify(end)}`);
  return text.slice(from, to + end.length);
}

function loadUpstream(packageName: string): Upstream {
  // Resolved by path: the releases' export maps expose neither package.json nor the chunk.
  const root = new URL(`../../node_modules/${packageName}/`, import.meta.url);
  const release = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version;
  const file = fileURLToPath(new URL('dist/index.js', root));
  const text = readFileSync(file, 'utf8');

  const tag = 'const BINARY_TAG = "__codemode_binary_v1__";';
  if (!text.includes(tag)) throw new Error(`${file}: cannot find ${tag}`);
  const functions = [
    'bytesToBase64',
    'base64ToBytes',
    'encodeCodemodeValue',
    'decodeCodemodeValue',
    'stringifyForCodemode',
    'parseForCodemode',
  ].map((name) => between(text, `\nfunction ${name}(`, '\n}\n', file));
  const hostCodec = [tag, ...functions].join('');
  const host = new Function(
    `${hostCodec}\nreturn { stringify: stringifyForCodemode, parse: parseForCodemode };`,
  )() as BinaryCodec;

  const sandboxSource = between(text, 'const SANDBOX_CODEC = String.raw`', '\n`;', file).slice(
    'const SANDBOX_CODEC = String.raw`'.length,
    -'\n`;'.length,
  );
  const sandbox = new Function(
    `${sandboxSource}\nreturn { stringify: __stringifyForCodemode, parse: __parseForCodemode };`,
  )() as BinaryCodec;

  const dispatcherSource = between(text, 'var ToolDispatcher = class extends RpcTarget {', '\n};', file);
  const Dispatcher = new Function(
    'RpcTarget',
    'stringifyForCodemode',
    'parseForCodemode',
    `${dispatcherSource}\nreturn ToolDispatcher;`,
  )(class {}, host.stringify, host.parse) as new (
    fns: Record<string, unknown>,
  ) => UpstreamDispatcher;

  return { release, host, sandbox, dispatcher: (fns) => new Dispatcher(fns) };
}

/** Every installed release that has the codec (it arrived in 0.3.7). */
const releases = ['codemode-0-3', 'codemode-0-4', '@cloudflare/codemode'].map(loadUpstream);

const ours = binaryCodec;
const oursInSandbox = new Function(`return ${BINARY_CODEC_SOURCE}`)()() as BinaryCodec;

/** A description of a decoded value that tells a Uint8Array, an ArrayBuffer and a plain object apart. */
function shapeOf(value: unknown): unknown {
  if (value instanceof ArrayBuffer) return { ArrayBuffer: Array.from(new Uint8Array(value)) };
  if (ArrayBuffer.isView(value)) {
    return { [value.constructor.name]: Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  }
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, nested]) => [key, shapeOf(nested)]));
  }
  return value;
}

function largeBytes(): Uint8Array {
  const bytes = new Uint8Array(70_001);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 9)) & 0xff;
  return bytes;
}

function encodeCorpus(): [string, unknown][] {
  const shared = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  return [
    ['Uint8Array', new Uint8Array([1, 2, 3])],
    ['empty Uint8Array', new Uint8Array(0)],
    ['subarray with an offset', shared.subarray(3, 7)],
    ['ArrayBuffer', shared.buffer],
    ['empty ArrayBuffer', new ArrayBuffer(0)],
    ['Int16Array', new Int16Array([258, -3])],
    ['Float64Array', new Float64Array([Math.E])],
    ['DataView over a range', new DataView(shared.buffer, 2, 3)],
    ['Uint8ClampedArray', new Uint8ClampedArray([300 & 0xff, 7])],
    ['nested binaries', { b: new Uint8Array([1]), list: [new Uint8Array([2]).buffer, { deep: new Int8Array([-1]) }] }],
    ['argument array', [undefined, null, 1, 'two', new Uint32Array([0xdeadbeef])]],
    ['Node Buffer (toJSON first)', Buffer.from([4, 5])],
    ['envelope with a binary result', { result: new Uint8Array([9, 9]) }],
    ['plain values', { a: 1, s: 'ü🔍', t: true, n: null, d: new Date(0), m: new Map([[1, 2]]) }],
    ['large buffer', largeBytes()],
  ];
}

const decodeCorpus: [string, string][] = [
  ['Uint8Array', '{"__codemode_binary_v1__":"Uint8Array","data":"AQID"}'],
  ['ArrayBuffer', '{"__codemode_binary_v1__":"ArrayBuffer","data":"/wA="}'],
  ['ArrayBufferView', '{"__codemode_binary_v1__":"ArrayBufferView","data":"AgE="}'],
  ['an unknown kind with string data', '{"__codemode_binary_v1__":"Nope","data":"AQ=="}'],
  ['numeric data', '{"__codemode_binary_v1__":"Uint8Array","data":5}'],
  ['no data', '{"__codemode_binary_v1__":"ArrayBuffer"}'],
  ['null data', '[{"__codemode_binary_v1__":"Uint8Array","data":null}]'],
  ['nested', '{"r":[{"x":{"__codemode_binary_v1__":"ArrayBuffer","data":""}}]}'],
  ['the tag as a plain string', '"__codemode_binary_v1__"'],
  ['plain', '{"a":[1,"b",null,true]}'],
];

describe.each(releases)('against upstream $release', (upstream) => {
  it('was cut out whole: upstream encodes a Uint8Array, another view and an ArrayBuffer with its binary tag', () => {
    expect(upstream.host.stringify(new Uint8Array([1, 2, 3]))).toBe(
      '{"__codemode_binary_v1__":"Uint8Array","data":"AQID"}',
    );
    expect(upstream.sandbox.stringify(new Int16Array([258]))).toBe(
      '{"__codemode_binary_v1__":"ArrayBufferView","data":"AgE="}',
    );
    expect(upstream.host.parse('{"__codemode_binary_v1__":"ArrayBuffer","data":"AQI="}')).toBeInstanceOf(ArrayBuffer);
  });

  it.each(encodeCorpus())('encodes %s byte for byte like the host codec', (_name, value) => {
    expect(ours.stringify(value)).toBe(upstream.host.stringify(value));
  });

  it.each(encodeCorpus())('encodes %s in the sandbox byte for byte like SANDBOX_CODEC', (_name, value) => {
    expect(oursInSandbox.stringify(value)).toBe(upstream.sandbox.stringify(value));
  });

  it.each(decodeCorpus)('decodes %s like both upstream codecs', (_name, text) => {
    const expected = shapeOf(upstream.host.parse(text));
    expect(shapeOf(upstream.sandbox.parse(text))).toEqual(expected);
    expect(shapeOf(ours.parse(text))).toEqual(expected);
    expect(shapeOf(oursInSandbox.parse(text))).toEqual(expected);
  });

  it.each(encodeCorpus())('decodes upstream’s encoding of %s to what upstream decodes', (_name, value) => {
    const text = upstream.sandbox.stringify(value);
    expect(shapeOf(ours.parse(text))).toEqual(shapeOf(upstream.host.parse(text)));
  });

  /** One tool behaviour, run through upstream's ToolDispatcher and through our envelope dispatch. */
  const tools: [string, (...args: unknown[]) => unknown, string][] = [
    ['a number', () => 42, '[]'],
    ['undefined', () => undefined, '[]'],
    ['null', () => null, '[]'],
    ['a Date', () => new Date(0), '[]'],
    ['a Map', () => new Map([[1, 2]]), '[]'],
    ['a Uint8Array', () => new Uint8Array([1, 2]), '[]'],
    ['a BigInt', () => 1n, '[]'],
    ['a TypeError', () => Promise.reject(new TypeError('bad')), '[]'],
    ['a thrown string', () => Promise.reject('str'), '[]'],
    ['a thrown object', () => Promise.reject({ a: 1 }), '[]'],
    ['a thrown 0', () => Promise.reject(0), '[]'],
    ['an empty Error message', () => Promise.reject(new Error('')), '[]'],
    [
      'a synchronous throw',
      () => {
        throw new Error('caught:sync');
      },
      '[]',
    ],
    ['the arguments of a spread array', (...args) => args, '[1,"two",{"three":3}]'],
    ['the arguments of a non-array', (...args) => args, '{"a":1}'],
    ['the arguments of an empty string', (...args) => args, ''],
    ['the arguments of a binary', (...args) => args, '[{"__codemode_binary_v1__":"ArrayBuffer","data":"AQI="}]'],
    ['malformed argument JSON', (...args) => args, '[1,'],
  ];

  it.each(tools)('answers a tool returning %s with the same envelope', async (_name, fn, argsJson) => {
    const expected = await upstream.dispatcher({ tool: fn }).call('tool', argsJson);
    const dispatch = createEnvelopeDispatch(
      {
        codemode: (tool, args) => {
          if (!Object.hasOwn({ tool: fn }, tool)) throw new ToolNotFoundError(tool);
          return fn(...args);
        },
      },
      { active: true },
    );
    expect(await dispatch('codemode', 'tool', argsJson)).toBe(expected);
  });

  it('answers an unknown tool with the same envelope', async () => {
    const expected = await upstream.dispatcher({}).call('nope', '[]');
    expect(expected).toBe('{"error":"Tool \\"nope\\" not found"}');
    expect(await createEnvelopeDispatch({}, { active: true })('codemode', 'nope', '[]')).toBe(expected);
  });
});
