/**
 * The reference worker: one `execute` per POST through the real `DynamicWorkerExecutor` of the
 * release this column's wrangler configuration aliases `@cloudflare/codemode` onto. Everything a
 * case declares is materialized here with the same `harness/tools.ts` every side uses.
 */
import { RpcTarget, WorkerEntrypoint } from 'cloudflare:workers';
import { DynamicWorkerExecutor } from '@cloudflare/codemode';
import { messageOf } from '../../src/protocol/index.js';
import type { Outcome } from '../case-model.js';
import { texts } from '../texts.js';
import {
  type CallRecord,
  type ConnectorCall,
  materializeConnectors,
  materializeOutbound,
  materializeProviders,
  normalizeResult,
  normalizeThrow,
  settledCalls,
} from '../tools.js';
import { type OutboundResponse, parseReferenceRequest, type ReferenceRequest } from './request.js';

interface Env {
  /** The `worker_loaders` binding of the column's configuration. */
  LOADER: unknown;
}

/** `ctx.exports` (the `enable_ctx_exports` flag of every column's configuration). */
interface Exports {
  Responder(options: { props: OutboundResponse }): unknown;
}

/**
 * A case's `outbound: {respond}` as upstream is given it: a Fetcher for `globalOutbound`. It answers
 * with the same `harness/tools.ts` function our side calls, so one declared response means one
 * thing on every column.
 */
export class Responder extends WorkerEntrypoint<Env, OutboundResponse> {
  override fetch(request: Request): Promise<Response> {
    const answer = materializeOutbound({ respond: this.ctx.props });
    if (typeof answer !== 'function') throw new Error('Responder: a response is always answered by a function');
    return answer(request);
  }
}

/** A connector's `callTool` must cross into the dynamic worker over Workers RPC, so it rides an RpcTarget. */
class ConnectorTarget extends RpcTarget {
  readonly #call: ConnectorCall;

  constructor(call: ConnectorCall) {
    super();
    this.#call = call;
  }

  callTool(method: string, args: unknown): Promise<unknown> {
    return this.#call(method, args);
  }
}

/** The loader's `load` and `get` as the executor calls them: a WorkerCode in, a worker out. */
interface LoaderLike {
  load(code: object): unknown;
  get(id: string, code: () => object | Promise<object>): unknown;
}

/**
 * The binding as a host that sets a CPU limit would hand it over: every WorkerCode it loads
 * carries `limits: {cpuMs}` (upstream's executor sets none of its own).
 */
function withCpuLimit(loader: unknown, cpuMs: number): LoaderLike {
  const binding = loader as LoaderLike;
  const limited = (code: object) => ({ ...code, limits: { cpuMs } });
  return {
    load: (code) => binding.load(limited(code)),
    get: (id, code) =>
      binding.get(id, () => {
        const given = code();
        return given instanceof Promise ? given.then(limited) : limited(given);
      }),
  };
}

/** Constructor options: only what the request sets, so an absent field means the release's own default. */
function constructorOptions(
  request: ReferenceRequest,
  loader: unknown,
  exports: Exports,
): ConstructorParameters<typeof DynamicWorkerExecutor>[0] {
  const options: Record<string, unknown> = {
    loader: request.loaderCpuMs === undefined ? loader : withCpuLimit(loader, request.loaderCpuMs),
  };
  if (request.timeout !== undefined) options.timeout = request.timeout;
  if (request.modules !== undefined) options.modules = request.modules;
  if (request.globalOutbound === 'blocked') options.globalOutbound = null;
  else if (request.globalOutbound !== undefined)
    options.globalOutbound = exports.Responder({ props: request.globalOutbound });
  return options as unknown as ConstructorParameters<typeof DynamicWorkerExecutor>[0];
}

/**
 * Runs the request; a rejection crossing `execute` is part of the surface and comes back as
 * `threw`. With `recordCalls`, the host functions called by then come back as `calls`.
 */
async function runExecute(request: ReferenceRequest, loader: unknown, exports: Exports): Promise<Outcome> {
  const record: CallRecord = [];
  let outcome: Outcome;
  try {
    const executor = new DynamicWorkerExecutor(constructorOptions(request, loader, exports));
    const providers = materializeProviders(request.providers, record);
    const providersOrFns = request.bareRecord ? (providers[0]?.fns ?? {}) : providers;
    const options = request.connectors
      ? {
          connectors: materializeConnectors(request.connectors, record).map(({ name, callTool }) => ({
            name,
            binding: new ConnectorTarget(callTool),
          })),
        }
      : undefined;
    outcome = normalizeResult(await executor.execute(request.code, providersOrFns, options));
  } catch (error) {
    outcome = normalizeThrow(error);
  }
  if (request.recordCalls) outcome.calls = await settledCalls(record);
  return outcome;
}

export default {
  async fetch(request: Request, env: Env, ctx: { exports: Exports }): Promise<Response> {
    if (request.method !== 'POST')
      return new Response(texts.reference.badBody(`expected POST, got ${request.method}`), { status: 405 });
    let body: ReferenceRequest;
    try {
      body = parseReferenceRequest(await request.text());
    } catch (error) {
      return new Response(messageOf(error), { status: 400 });
    }
    return Response.json(await runExecute(body, env.LOADER, ctx.exports));
  },
};
