/**
 * Facet calls cross as Workers RPC does. The reference is real workerd: each probe value is sent
 * to a service binding's entrypoint there and to a facet of the durable state here, and what
 * arrives (or the error the call fails with) must be the same. Plus what only facets have: one
 * instance per name, one database per facet, a class that must be among `exports`.
 */
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { serveWorkerd } from '../support/workerd.js';
import { DESCRIBE_SOURCE, PROBES, SEND_SOURCE } from './support/rpc-probes.js';

/** What `cloudflare:workers` resolves to under the register entry (plain JavaScript, read untyped). */
const { DurableObject, RpcTarget } = (await import(
  new URL('../../src/register/cloudflare-workers.js', import.meta.url).href
)) as {
  DurableObject: new (ctx: unknown, env: unknown) => { ctx: unknown; env: unknown };
  RpcTarget: new () => object;
};

const CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .main), (name = "target", worker = .target) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  modules = [ (name = "main.js", esModule = embed "main.js") ],
  compatibilityDate = "2026-04-01",
  bindings = [ (name = "T", service = (name = "target", entrypoint = "Target")) ],
);
const target :Workerd.Worker = (
  modules = [ (name = "target.js", esModule = embed "target.js") ],
  compatibilityDate = "2026-04-01",
);
`;

const TARGET = `import { WorkerEntrypoint } from 'cloudflare:workers';
${DESCRIBE_SOURCE}
export class Target extends WorkerEntrypoint {
  describe(x) { return describeArrival(x); }
  throwIt() { throw new RangeError('nope'); }
}
export default { fetch() { return new Response(''); } };
`;

const MAIN = `import { RpcTarget } from 'cloudflare:workers';
${SEND_SOURCE}
export default {
  async fetch(request, env) {
    const seen = {};
${Object.entries(PROBES)
  .map(([name, source]) => `    seen[${JSON.stringify(name)}] = await sendProbe((v) => env.T.describe(v), ${source});`)
  .join('\n')}
    seen.thrownByCallee = await sendProbe(() => env.T.throwIt(), undefined);
    return Response.json(seen);
  },
};
`;

/** Runs the probes in workerd and returns what it saw. */
async function observeInWorkerd(): Promise<Record<string, unknown>> {
  const worker = await serveWorkerd({ 'config.capnp': CONFIG, 'main.js': MAIN, 'target.js': TARGET });
  try {
    const response = await fetch(`${worker.url}/`);
    return (await response.json()) as Record<string, unknown>;
  } finally {
    await worker.stop();
  }
}

const describeArrival = new Function(`${DESCRIBE_SOURCE}; return describeArrival;`)() as (
  x: unknown,
) => Promise<unknown>;
const sendProbe = new Function(`${SEND_SOURCE}; return sendProbe;`)() as (
  call: (value: unknown) => unknown,
  value: unknown,
) => Promise<unknown>;

class Probe extends DurableObject {
  describe(x: unknown) {
    return describeArrival(x);
  }
  throwIt() {
    throw new RangeError('nope');
  }
}

interface ProbeStub {
  describe(x: unknown): Promise<unknown>;
  throwIt(): Promise<never>;
}

let dir: string;
let ctx: DurableState;
let reference: Record<string, unknown>;

beforeAll(async () => {
  reference = await observeInWorkerd();
  dir = await mkdtemp(join(tmpdir(), 'durable-rpc-state-'));
  ctx = await openDurableState({ path: dir, exports: { Probe } });
});

afterAll(async () => {
  await ctx?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a facet call carries values as Workers RPC does', () => {
  it.each(Object.keys(PROBES))('%s', async (name) => {
    const facet = ctx.facets.get('probe', () => ({ class: Probe })) as ProbeStub;
    const value = new Function('RpcTarget', `return ${PROBES[name]};`)(RpcTarget);
    expect(await sendProbe((v) => facet.describe(v), value)).toEqual(reference[name]);
  });

  it('an error thrown by the callee', async () => {
    const facet = ctx.facets.get('probe', () => ({ class: Probe })) as ProbeStub;
    expect(await sendProbe(() => facet.throwIt(), undefined)).toEqual(reference.thrownByCallee);
  });
});

describe('facets', () => {
  class Counter extends DurableObject {
    constructor(state: DurableState, env: unknown) {
      super(state, env);
      state.storage.sql.exec('CREATE TABLE IF NOT EXISTS hits (n INTEGER)');
    }
    hit() {
      (this.ctx as DurableState).storage.sql.exec('INSERT INTO hits VALUES (1)');
      return (this.ctx as DurableState).storage.sql.exec('SELECT count(*) AS n FROM hits').one().n;
    }
  }
  type CounterStub = { hit(): Promise<number> };

  it('gives one instance per name, each with its own database', async () => {
    const local = await mkdtemp(join(tmpdir(), 'durable-facets-'));
    const state = await openDurableState({ path: local, exports: { Counter } });
    try {
      const a = state.facets.get('a', () => ({ class: Counter })) as CounterStub;
      expect(state.facets.get('a', () => ({ class: Counter }))).toBe(a);
      const b = state.facets.get('b', () => ({ class: Counter })) as CounterStub;
      expect([await a.hit(), await a.hit(), await b.hit()]).toEqual([1, 2, 1]);
      expect(() => state.storage.sql.exec('SELECT * FROM hits')).toThrow('no such table: hits');
    } finally {
      await state.close();
      await rm(local, { recursive: true, force: true });
    }
  });

  it("keeps each facet's database in its own directory under facets/, its own facets below it", async () => {
    class Parent extends DurableObject {
      async childHit() {
        const child = (this.ctx as DurableState).facets.get('child', () => ({ class: Counter })) as CounterStub;
        return child.hit();
      }
    }
    const local = await mkdtemp(join(tmpdir(), 'durable-facets-'));
    const state = await openDurableState({ path: local, exports: { Counter, Parent } });
    try {
      const parent = state.facets.get('codemode:default', () => ({ class: Parent })) as { childHit(): Promise<number> };
      expect([await parent.childHit(), await parent.childHit()]).toEqual([1, 2]);
      const childDatabase = join(local, 'facets', 'codemode%3Adefault', 'facets', 'child', 'state.sqlite');
      expect(statSync(childDatabase).isFile()).toBe(true);
    } finally {
      await state.close();
    }
    // Reopened, the nested facet's rows are where they were.
    const reopened = await openDurableState({ path: local, exports: { Counter, Parent } });
    try {
      const parent = reopened.facets.get('codemode:default', () => ({ class: Parent })) as {
        childHit(): Promise<number>;
      };
      expect(await parent.childHit()).toBe(3);
    } finally {
      await reopened.close();
      await rm(local, { recursive: true, force: true });
    }
  });

  it('refuses a class that is not among exports, and a method the class lacks', async () => {
    const stray = ctx.facets.get('stray', () => ({ class: Counter })) as CounterStub;
    await expect(stray.hit()).rejects.toThrow('facets.get("stray"): the startup class is not one of options.exports');
    const facet = ctx.facets.get('probe', () => ({ class: Probe })) as unknown as { nothing(): Promise<void> };
    await expect(facet.nothing()).rejects.toThrow('The RPC receiver does not implement the method "nothing".');
  });
});
