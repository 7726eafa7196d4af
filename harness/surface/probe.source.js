async () => {
  // The surface inventory probe. It runs as the code of one `execute`, on the reference and on
  // ours alike, and returns one flat record: key -> what was measured there. It is plain
  // JavaScript read as text, so no compiler rewrites it on the way into either sandbox.
  const tagOf = (value) => Object.prototype.toString.call(value).slice(8, -1);
  const isObjectLike = (value) => value !== null && (typeof value === 'object' || typeof value === 'function');
  const keyName = (key) => (typeof key === 'symbol' ? `[${key.description}]` : key);

  // The name of the value's prototype: its constructor's name, else that prototype's brand.
  const prototypeName = (value) => {
    if (!isObjectLike(value)) return null;
    const proto = Object.getPrototypeOf(value);
    if (proto === null) return 'null';
    const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor');
    if (ctor && typeof ctor.value === 'function' && ctor.value.name) return ctor.value.name;
    return tagOf(proto);
  };

  // What a prototype holder is called: its own constructor's name, else its brand.
  const holderName = (holder) => {
    const ctor = Object.getOwnPropertyDescriptor(holder, 'constructor');
    return ctor && typeof ctor.value === 'function' && ctor.value.name ? ctor.value.name : tagOf(holder);
  };

  // typeof, refined for functions: a class, a constructor (owns a prototype pointing back), or a plain function.
  const kindOf = (value) => {
    if (value === null) return 'null';
    if (typeof value !== 'function') return typeof value;
    let source = '';
    try {
      source = Function.prototype.toString.call(value);
    } catch {
      source = '';
    }
    if (/^class\b/.test(source)) return 'class';
    const proto = Object.getOwnPropertyDescriptor(value, 'prototype');
    if (proto && isObjectLike(proto.value)) {
      const back = Object.getOwnPropertyDescriptor(proto.value, 'constructor');
      if (back && back.value === value) return 'constructor';
    }
    return 'function';
  };

  const describeValue = (value) => ({
    kind: kindOf(value),
    arity: typeof value === 'function' ? value.length : null,
    prototype: prototypeName(value),
    brand: isObjectLike(value) ? tagOf(value) : null,
  });

  // Every key of `target` and its prototype chain, first holder wins, stopping before the bases
  // every object or function shares. Values are read through `receiver`, as user code reads them.
  const walk = (target, receiver, stopAt) => {
    const seen = new Map();
    for (let holder = target; holder !== null && !stopAt.includes(holder); holder = Object.getPrototypeOf(holder)) {
      const owner = holder === target ? 'own' : holderName(holder);
      for (const key of Reflect.ownKeys(holder)) {
        if (seen.has(keyName(key))) continue;
        const descriptor = Object.getOwnPropertyDescriptor(holder, key);
        const access = descriptor && ('get' in descriptor || 'set' in descriptor) ? 'accessor' : 'data';
        let entry;
        try {
          entry = describeValue(access === 'data' ? descriptor.value : Reflect.get(holder, key, receiver));
        } catch (error) {
          entry = { kind: 'throws', arity: null, prototype: isObjectLike(error) ? error.name : typeof error, brand: null };
        }
        seen.set(keyName(key), { owner, access, ...entry });
      }
    }
    return seen;
  };

  const record = {};
  const BASES = [Object.prototype, Function.prototype];

  for (const [name, entry] of walk(globalThis, globalThis, [Object.prototype])) record[`global ${name}`] = entry;

  // Capabilities: objects code reaches for, instances of the fetch family included, so that
  // accessors are read on a real receiver rather than on a bare prototype.
  const capabilities = {
    console: () => console,
    crypto: () => crypto,
    'crypto.subtle': () => crypto.subtle,
    navigator: () => navigator,
    scheduler: () => scheduler,
    performance: () => performance,
    caches: () => caches,
    'caches.default': () => caches.default,
    fetch: () => fetch,
    Request: () => Request,
    'new Request()': () => new Request('https://example.com/'),
    Response: () => Response,
    'new Response()': () => new Response(''),
    Headers: () => Headers,
    'new Headers()': () => new Headers(),
    AbortSignal: () => AbortSignal,
    'new AbortController().signal': () => new AbortController().signal,
    URL: () => URL,
    'new URL()': () => new URL('https://example.com/'),
    process: () => process,
  };
  for (const [name, read] of Object.entries(capabilities)) {
    let value;
    try {
      value = read();
    } catch (error) {
      record[`capability ${name}`] = { kind: 'throws', arity: null, prototype: isObjectLike(error) ? error.name : typeof error, brand: null };
      continue;
    }
    record[`capability ${name}`] = describeValue(value);
    if (!isObjectLike(value)) continue;
    for (const [member, entry] of walk(value, value, BASES)) record[`member ${name}.${member}`] = entry;
  }
  return record;
}
