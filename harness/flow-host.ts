/**
 * The host side of a runtime flow, alike on every column: it builds the flow's connectors (as
 * subclasses of the release's own `CodemodeConnector`), makes the runtime handle with
 * `createCodemodeRuntime` over the `ctx` and executor the column provides, and makes one call on
 * it. What really ran (tools, reverts, hooks) is noted as it runs. The value comes back
 * JSON-safe, with execution ids still raw: the driver (flows.ts) names and normalizes them.
 * Runtime-neutral: the reference worker bundles this module.
 */
import { messageOf } from '../src/protocol/index.js';
import type { FlowCall, FlowConnector, FlowRuntimeOptions, FlowTool, StepOutcome } from './flow-model.js';
import { texts } from './texts.js';

/** The parts of `@cloudflare/codemode` (0.4.0 and later) a flow uses. */
export interface RuntimeApi {
  createCodemodeRuntime(options: Record<string, unknown>): RuntimeHandle;
  CodemodeConnector: abstract new (ctx: never, env: never) => object;
  /** The release's own result trimmer, which a flow's `transformResult: truncate` applies. */
  truncateResult(value: unknown, options?: { maxChars?: number }): unknown;
}

type Handle = (...args: never[]) => Promise<unknown>;
interface RuntimeHandle {
  tool(): {
    description: string;
    inputSchema: unknown;
    execute(input: { code: string }, options: undefined): Promise<unknown>;
    /** From 0.5.2. */
    toModelOutput?(options: { output: unknown }): unknown;
  };
  /** From 0.4.4; before it a host runs code through `tool().execute`, which is what this method does. */
  execute?: Handle;
  approve: Handle;
  reject: Handle;
  rollback: Handle;
  pending: Handle;
  executions: Handle;
  saveSnippet: Handle;
  snippets: Handle;
  deleteSnippet: Handle;
  search: Handle;
  describe: Handle;
  expirePaused: Handle;
  deleteExecution: Handle;
  pruneExecutions: Handle;
}

/** One call as the host receives it: execution labels already replaced by ids. */
export interface HostStepRequest {
  connectors: FlowConnector[];
  runtime?: FlowRuntimeOptions;
  call: FlowCall;
  /** The flow's packages, bundled: the module map the column's executor is made with (`Flow.packages`). */
  modules?: Record<string, { js: string }>;
}

/** The part of an executor upstream's runtime calls: `execute(code, providers, { connectors })`. */
interface RuntimeExecutor {
  execute(code: string, providers: unknown, options?: Record<string, unknown>): Promise<unknown>;
}

/**
 * Our executor with a module map on every call the runtime makes, as a host composes it: upstream's
 * runtime passes no modules, and `CodemodeExecutor` takes them on the call, where upstream's
 * executor takes them at construction.
 */
export function withModules(executor: RuntimeExecutor, modules: HostStepRequest['modules']): RuntimeExecutor {
  if (modules === undefined) return executor;
  return { execute: (code, providers, options) => executor.execute(code, providers, { ...options, modules }) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What `transformResult: truncate` trims a result to: small, so a flow's result shows the cut. */
const TRUNCATE_MAX_CHARS = 300;

/** The `transformResult` a flow names, over the release's own helpers. */
function transformOf(api: RuntimeApi, name: NonNullable<FlowRuntimeOptions['transformResult']>) {
  if (name === 'wrap') return (result: unknown) => ({ transformed: result });
  if (name === 'truncate') return (result: unknown) => api.truncateResult(result, { maxChars: TRUNCATE_MAX_CHARS });
  return () => {
    throw new Error(texts.flow.transformThrows);
  };
}

function toolOf(connector: string, name: string, tool: FlowTool, ran: string[]) {
  const key = `${connector}.${name}`;
  return {
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema }),
    ...(tool.approval ? { requiresApproval: true } : {}),
    ...(tool.reexecute ? { replay: 'reexecute' } : {}),
    execute: async (args: unknown, context?: { executionId?: string }) => {
      ran.push(key);
      if (tool.delay !== undefined) await sleep(tool.delay);
      if (tool.throws !== undefined) throw new Error(tool.throws);
      if (tool.echo) return args;
      if (tool.bytes !== undefined) return Uint8Array.from(tool.bytes);
      if (tool.executionId) return context?.executionId;
      if (tool.repeat !== undefined) return 'x'.repeat(tool.repeat);
      return structuredClone(tool.returns);
    },
    ...(tool.revert
      ? {
          revert: async () => {
            ran.push(`revert ${key}`);
            if (typeof tool.revert === 'string') throw new Error(tool.revert);
          },
        }
      : {}),
  };
}

/** A connector instance for one declaration, built on the release's own base class. */
function connectorOf(api: RuntimeApi, declared: FlowConnector, ctx: unknown, ran: string[]): object {
  const Base = api.CodemodeConnector as unknown as new (ctx: unknown, env: unknown) => object;
  class Declared extends Base {
    name() {
      return declared.name;
    }
    instructions() {
      return declared.instructions;
    }
    tools() {
      return Object.fromEntries(
        Object.entries(declared.tools).map(([name, tool]) => [name, toolOf(declared.name, name, tool, ran)]),
      );
    }
    async onPassEnd(executionId: string, status: string) {
      if (declared.hooks) ran.push(`${declared.name}.onPassEnd ${executionId} ${status}`);
    }
    async disposeExecution(executionId: string, status: string) {
      if (declared.hooks) ran.push(`${declared.name}.disposeExecution ${executionId} ${status}`);
    }
  }
  return new Declared(ctx, {});
}

/** A fresh handle for the call's runtime name and connectors. */
function handleFor(
  api: RuntimeApi,
  ctx: unknown,
  executor: unknown,
  request: HostStepRequest,
  call: FlowCall,
  ran: string[],
) {
  const chosen = call.connectors
    ? request.connectors.filter((connector) => call.connectors!.includes(connector.name))
    : request.connectors;
  const { maxExecutions, transformResult } = request.runtime ?? {};
  return api.createCodemodeRuntime({
    ctx,
    executor,
    connectors: chosen.map((connector) => connectorOf(api, connector, ctx, ran)),
    ...(call.runtime === undefined ? {} : { name: call.runtime }),
    ...(maxExecutions === undefined ? {} : { maxExecutions }),
    ...(transformResult === undefined ? {} : { transformResult: transformOf(api, transformResult) }),
  });
}

/** The program of a `run` step: a call of `codemode.run`, as the model would write it. */
function runProgram(name: string, input: unknown): string {
  const args = input === undefined ? JSON.stringify(name) : `${JSON.stringify(name)}, ${JSON.stringify(input)}`;
  return `async () => await codemode.run(${args})`;
}

/** `runtime.execute({ code })`, or on a release without it (0.4.1) the model-facing tool it wraps. */
function execute(handle: RuntimeHandle, code: string): Promise<unknown> {
  if (handle.execute) return (handle.execute as (input: { code: string }) => Promise<unknown>)({ code });
  return handle.tool().execute({ code }, undefined);
}

async function callOn(handle: RuntimeHandle, action: FlowCall): Promise<unknown> {
  if (action.after !== undefined) await sleep(action.after);
  const h = handle as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  if ('execute' in action) return execute(handle, action.execute);
  if ('run' in action) return execute(handle, runProgram(action.run, action.input));
  if ('approve' in action) return h.approve!({ executionId: action.approve });
  if ('reject' in action) return h.reject!({ seq: action.seq, executionId: action.reject });
  if ('rollback' in action) return h.rollback!({ executionId: action.rollback });
  if ('pending' in action) return h.pending!(action.pending ?? undefined);
  if ('executions' in action) return h.executions!(action.executions ?? undefined);
  if ('saveSnippet' in action) {
    const { description, inputSchema } = action;
    return h.saveSnippet!(action.saveSnippet, {
      executionId: action.from,
      ...(description === undefined ? {} : { description }),
      ...(inputSchema === undefined ? {} : { inputSchema }),
    });
  }
  if ('snippets' in action) return h.snippets!();
  if ('deleteSnippet' in action) return h.deleteSnippet!(action.deleteSnippet);
  if ('search' in action) return h.search!(action.search);
  if ('describe' in action) return h.describe!(action.describe);
  if ('expirePaused' in action)
    return h.expirePaused!(action.expirePaused === null ? undefined : { maxAgeMs: action.expirePaused });
  if ('deleteExecution' in action) return h.deleteExecution!(action.deleteExecution);
  if ('pruneExecutions' in action) return h.pruneExecutions!(action.pruneExecutions);
  // The input schema's object differs by release (a zod-like one, then a Standard Schema): only the text is compared.
  if ('tool' in action) return { description: handle.tool().description };
  if ('toModelOutput' in action) {
    const tool = handle.tool();
    if (tool.toModelOutput === undefined) throw new Error(texts.flow.noModelOutput);
    return tool.toModelOutput({ output: action.toModelOutput });
  }
  throw new Error(texts.flow.unknownCall(JSON.stringify(action)));
}

/** Binaries as `{binary, bytes}` and BigInts as `10n`, so the value survives JSON. */
function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(
    JSON.stringify(value, (_key, nested: unknown) => {
      if (typeof nested === 'bigint') return `${nested}n`;
      if (nested instanceof ArrayBuffer || ArrayBuffer.isView(nested)) {
        const view = ArrayBuffer.isView(nested)
          ? new Uint8Array(nested.buffer, nested.byteOffset, nested.byteLength)
          : new Uint8Array(nested);
        return { binary: Object.prototype.toString.call(nested).slice(8, -1), bytes: Array.from(view) };
      }
      return nested;
    }),
  );
}

async function settle(work: () => Promise<unknown>): Promise<{ value?: unknown; threw?: string }> {
  try {
    const value = jsonSafe(await work());
    return value === undefined ? {} : { value };
  } catch (error) {
    return { threw: messageOf(error) };
  }
}

/** Makes one call of a flow on a runtime over `ctx` and `executor`. Never rejects. */
export async function runHostStep(
  api: RuntimeApi,
  ctx: unknown,
  executor: unknown,
  request: HostStepRequest,
): Promise<StepOutcome> {
  const ran: string[] = [];
  const { call } = request;
  if ('concurrent' in call) {
    const values = await Promise.all(
      call.concurrent.map((inner) =>
        settle(() => callOn(handleFor(api, ctx, executor, request, inner, ran) as RuntimeHandle, inner)),
      ),
    );
    // Concurrent calls interleave: what ran is compared as a set.
    return { value: values, ran: ran.sort() };
  }
  const settled = await settle(() => callOn(handleFor(api, ctx, executor, request, call, ran) as RuntimeHandle, call));
  return { ...settled, ran };
}
