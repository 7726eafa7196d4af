/**
 * The Workers runtime's global names that `@cloudflare/codemode`'s declarations use without
 * importing them (`DurableObjectState`, `ExecutionContext`, `WorkerLoader`, `Fetcher`). A Worker
 * project has them from `@cloudflare/workers-types`; this project's Node program does not, since
 * that package's global form clashes with Node's and the DOM's. So each name here is the very
 * declaration from the package's module form, which declares nothing globally.
 *
 * Only the tests, the harness and the bench read upstream's declarations. src/ never does, and
 * cannot lean on these names: tsconfig.build.json, which builds it, does not include this file.
 */
import type * as Workers from '@cloudflare/workers-types/index.js';

declare global {
  type DurableObjectState<Props = unknown> = Workers.DurableObjectState<Props>;
  type ExecutionContext<Props = unknown> = Workers.ExecutionContext<Props>;
  type WorkerLoader = Workers.WorkerLoader;
  type Fetcher<
    T extends Workers.Rpc.EntrypointBranded | undefined = undefined,
    Reserved extends string = never,
  > = Workers.Fetcher<T, Reserved>;
}
