/**
 * The value codec's implementation (value-codec.ts describes the form): self-contained, so the
 * supervisor's bundle imports this module alone, and `VALUE_CODEC_SOURCE` is its source text.
 */

export interface ValueCodec {
  encode(value: unknown): unknown;
  decode(tree: unknown): unknown;
}

export function createValueCodec(makeFunction: (key: string | undefined) => unknown): ValueCodec {
  const chunk = 32768;
  const errorConstructors: Record<string, ErrorConstructor> = {
    Error,
    EvalError,
    RangeError,
    ReferenceError,
    SyntaxError,
    TypeError,
    URIError,
  };

  function toBase64(bytes: Uint8Array): string {
    let binary = '';
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      binary += String.fromCharCode.apply(null, Array.from(bytes.subarray(offset, offset + chunk)));
    }
    return btoa(binary);
  }

  function fromBase64(data: string): Uint8Array {
    const binary = atob(data);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  /** An IEEE 754 half-precision value from its 16 bits. */
  function fromHalf(bits: number): number {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0) return sign * fraction * 2 ** -24;
    if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
    return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }

  /**
   * A typed array of a kind this runtime lacks. A `Float16Array` (Node 20 has none) becomes
   * a `Float32Array` of the same values, every half-precision value being exact in single
   * precision, so indexing, length and JSON give what structured clone gives a host that has the
   * type. Any other kind stays its bytes.
   */
  function missingView(kind: string, bytes: Uint8Array): unknown {
    if (kind !== 'Float16Array') return bytes;
    const halves = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
    return Float32Array.from(halves, fromHalf);
  }

  function encode(root: unknown): unknown {
    const seen = new Map<object, number>();
    const enc = (value: unknown): unknown => {
      switch (typeof value) {
        case 'string':
        case 'boolean':
          return value;
        case 'number':
          if (Number.isNaN(value) || !Number.isFinite(value) || Object.is(value, -0))
            return ['n', String(Object.is(value, -0) ? '-0' : value)];
          return value;
        case 'undefined':
          return ['u'];
        case 'bigint':
          return ['b', value.toString()];
        case 'function':
          // A function, or an RPC stub (workerd makes every stub callable).
          return ['f'];
        case 'symbol':
          throw new TypeError(`${String(value)} could not be cloned.`);
      }
      if (value === null) return null;
      const object = value as object;
      const ref = seen.get(object);
      if (ref !== undefined) return ['x', ref];
      seen.set(object, seen.size);
      if (Array.isArray(object)) {
        const out: unknown[] = ['a', object.length];
        for (let i = 0; i < object.length; i++) out.push(i in object ? enc(object[i]) : ['h']);
        return out;
      }
      if (object instanceof Date) return ['d', Number.isNaN(object.getTime()) ? null : object.getTime()];
      if (object instanceof RegExp) return ['r', object.source, object.flags];
      if (object instanceof Map) {
        const out: unknown[] = ['m'];
        for (const [key, item] of object) out.push(enc(key), enc(item));
        return out;
      }
      if (object instanceof Set) {
        const out: unknown[] = ['s'];
        for (const item of object) out.push(enc(item));
        return out;
      }
      if (object instanceof ArrayBuffer) return ['ab', toBase64(new Uint8Array(object))];
      if (ArrayBuffer.isView(object)) {
        const kind = Object.prototype.toString.call(object).slice(8, -1);
        return ['v', kind, toBase64(new Uint8Array(object.buffer, object.byteOffset, object.byteLength))];
      }
      if (object instanceof Error) {
        const out: unknown[] = [
          'e',
          String(object.name),
          String(object.message),
          typeof object.stack === 'string' ? object.stack : null,
        ];
        if ('cause' in object) out.push(enc((object as { cause?: unknown }).cause));
        return out;
      }
      if (object instanceof Number || object instanceof String || object instanceof Boolean)
        return ['B', enc(object.valueOf())];
      if (Object.prototype.toString.call(object) === '[object BigInt]')
        return ['B', enc((object as { valueOf(): unknown }).valueOf())];
      const out: unknown[] = ['o'];
      for (const key of Object.keys(object)) out.push(key, enc((object as Record<string, unknown>)[key]));
      return out;
    };
    return enc(root);
  }

  function decode(tree: unknown): unknown {
    const refs: unknown[] = [];
    const dec = (node: unknown, key?: string): unknown => {
      if (node === null || typeof node !== 'object') return node;
      const item = node as unknown[];
      switch (item[0]) {
        case 'u':
          return undefined;
        case 'n':
          return Number(item[1]);
        case 'b':
          return BigInt(item[1] as string);
        case 'f':
          return makeFunction(key);
        case 'x':
          return refs[item[1] as number];
        case 'a': {
          const out = new Array<unknown>(item[1] as number);
          refs.push(out);
          for (let i = 0; i < out.length; i++) {
            const element = item[i + 2] as unknown[] | unknown;
            if (!(Array.isArray(element) && element[0] === 'h')) out[i] = dec(element);
          }
          return out;
        }
        case 'd': {
          const out = new Date(item[1] === null ? NaN : (item[1] as number));
          refs.push(out);
          return out;
        }
        case 'r': {
          const out = new RegExp(item[1] as string, item[2] as string);
          refs.push(out);
          return out;
        }
        case 'm': {
          const out = new Map<unknown, unknown>();
          refs.push(out);
          for (let i = 1; i < item.length; i += 2) out.set(dec(item[i]), dec(item[i + 1]));
          return out;
        }
        case 's': {
          const out = new Set<unknown>();
          refs.push(out);
          for (let i = 1; i < item.length; i++) out.add(dec(item[i]));
          return out;
        }
        case 'ab': {
          const out = fromBase64(item[1] as string).buffer;
          refs.push(out);
          return out;
        }
        case 'v': {
          const bytes = fromBase64(item[2] as string);
          const kind = item[1] as string;
          const View = (globalThis as Record<string, unknown>)[kind];
          let out: unknown;
          if (kind === 'DataView') out = new DataView(bytes.buffer);
          else if (typeof View === 'function' && kind.endsWith('Array')) {
            const Typed = View as new (buffer: ArrayBuffer) => unknown;
            out = new Typed(bytes.buffer as ArrayBuffer);
          } else out = missingView(kind, bytes);
          refs.push(out);
          return out;
        }
        case 'e': {
          const name = item[1] as string;
          const Ctor = Object.hasOwn(errorConstructors, name) ? errorConstructors[name]! : Error;
          const out = new Ctor(item[2] as string);
          if (out.name !== name)
            Object.defineProperty(out, 'name', { value: name, writable: true, configurable: true });
          if (typeof item[3] === 'string')
            Object.defineProperty(out, 'stack', { value: item[3], writable: true, configurable: true });
          refs.push(out);
          if (item.length > 4)
            Object.defineProperty(out, 'cause', { value: dec(item[4]), writable: true, configurable: true });
          return out;
        }
        case 'B': {
          const out = Object(dec(item[1])) as object;
          refs.push(out);
          return out;
        }
        case 'o': {
          const out: Record<string, unknown> = {};
          refs.push(out);
          for (let i = 1; i < item.length; i += 2) {
            // defineProperty, so a "__proto__" key stays a key and never swaps the prototype.
            Object.defineProperty(out, item[i] as string, {
              value: dec(item[i + 1], item[i] as string),
              writable: true,
              enumerable: true,
              configurable: true,
            });
          }
          return out;
        }
        default:
          throw new TypeError(`Malformed encoded value: unknown tag ${JSON.stringify(item[0])}`);
      }
    };
    return dec(tree);
  }

  return { encode, decode };
}
