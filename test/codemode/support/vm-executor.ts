/**
 * A small native executor for the adapter's tests. It really runs the request's arrow in a
 * `node:vm` context and really calls `request.dispatch` with the argument array encoded by the
 * protocol's binary codec, so the adapter is exercised end to end. It is not a sandbox: vm is no
 * security boundary, and it runs no static imports.
 */
import vm from 'node:vm';
import { binaryCodec } from '../../../src/protocol/codec.js';
import { ExecutionTimeoutError, ExecutorError } from '../../../src/protocol/errors.js';
import { separateImports } from '../../../src/protocol/imports.js';
import { validateProviders } from '../../../src/protocol/providers.js';
import type { ExecuteRequest, ExecuteResult, Executor, LogEntry, LogLevel } from '../../../src/protocol/types.js';

/** One tool call the sandbox made, with the envelope the host answered. */
export interface RecordedCall {
  provider: string;
  tool: string;
  argsJson: string;
  envelope?: string;
}

const VM_NO_IMPORTS = 'The vm test executor runs no static imports';

export class VmExecutor implements Executor {
  readonly reportsEndings = true;
  readonly requests: ExecuteRequest[] = [];
  readonly calls: RecordedCall[] = [];
  disposeCalls = 0;
  readonly #pending = new Set<Promise<unknown>>();
  readonly #defaultTimeout: number;

  constructor(options: { defaultTimeout?: number } = {}) {
    this.#defaultTimeout = options.defaultTimeout ?? 5_000;
  }

  async execute(request: ExecuteRequest): Promise<ExecuteResult> {
    this.requests.push(request);
    const logs: LogEntry[] = [];
    const rejection = validateProviders(request.providers);
    if (rejection) return { error: rejection, logs };
    if (separateImports(request.code).imports) return { error: VM_NO_IMPORTS, logs };

    const context = vm.createContext({
      console: { log: capture(logs, 'log'), warn: capture(logs, 'warn'), error: capture(logs, 'error') },
      // The raw transport, so a test can name a provider nobody declared.
      __dispatch: (provider: string, tool: string, argsJson: string) =>
        this.#dispatch(request, provider, tool, argsJson),
    });
    for (const { name } of request.providers ?? []) context[name] = this.#namespace(request, name);

    const bound = request.timeout ?? this.#defaultTimeout;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ExecutionTimeoutError(bound)), bound);
    });
    try {
      const run = (async () => (vm.runInContext(`(\n${request.code}\n)`, context) as () => unknown)())();
      run.catch(() => {}); // a run that fails after its timeout has nobody left to tell
      const value = await Promise.race([run, timedOut]);
      return {
        result: value === undefined ? undefined : binaryCodec.parse(binaryCodec.stringify(value)),
        logs: [...logs],
      };
    } catch (error) {
      // The bound is the executor's ending, as data beside its text; anything else the program's.
      if (error instanceof ExecutionTimeoutError && error.timeout === bound)
        return { error: error.message, ending: { code: 'EXECUTION_TIMEOUT', timeout: bound }, logs: [...logs] };
      return { error: sandboxMessage(error), logs: [...logs] };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every tool call started so far has settled. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  invokeHandle(): Promise<ExecuteResult> {
    return Promise.reject(new ExecutorError('HANDLE_NOT_FOUND', 'The vm test executor retains no handles'));
  }

  async closeHandles(): Promise<void> {}

  async dispose(): Promise<void> {
    this.disposeCalls += 1;
  }

  /** The namespace proxy: any string key but `then` dispatches, as the native contract's default proxy does. */
  #namespace(request: ExecuteRequest, provider: string): object {
    return new Proxy(
      {},
      {
        get: (_target, key) => {
          if (typeof key !== 'string' || key === 'then') return undefined;
          return (...args: unknown[]) => this.#call(request, provider, key, args);
        },
      },
    );
  }

  #call(request: ExecuteRequest, provider: string, tool: string, args: unknown[]): Promise<unknown> {
    const call = (async () => {
      const envelope = await this.#dispatch(request, provider, tool, binaryCodec.stringify(args));
      const data = binaryCodec.parse(envelope) as { result?: unknown; error?: string };
      if (data.error) throw new Error(data.error);
      return data.result;
    })();
    // A rejection the program never handles stays inside the "sandbox", as it would in an isolate.
    call.catch(() => {});
    return call;
  }

  #dispatch(request: ExecuteRequest, provider: string, tool: string, argsJson: string): Promise<string> {
    const record: RecordedCall = { provider, tool, argsJson };
    this.calls.push(record);
    if (!request.dispatch) return Promise.reject(new Error('The request carries no dispatch'));
    const answer = request.dispatch(provider, tool, argsJson).then((envelope) => {
      record.envelope = envelope;
      return envelope;
    });
    this.#pending.add(answer);
    void answer.finally(() => this.#pending.delete(answer)).catch(() => {});
    return answer;
  }
}

function capture(logs: LogEntry[], level: LogLevel) {
  return (...args: unknown[]) => {
    logs.push({ level, message: args.map(String).join(' ') });
  };
}

/** Errors from the vm realm are not `instanceof Error` here, so read `message` structurally. */
function sandboxMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}
