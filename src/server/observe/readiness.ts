/**
 * Whether the daemon should get new sessions, as `/readyz` says it: not while it drains, and not
 * while its executor cannot start a sandbox. That is learned from a trivial probe execution at
 * start, from every execution's outcome, and, while the sandbox is unavailable, from a new probe
 * at most every `REPROBE_MS` when `/readyz` is asked.
 */
import { messageOf } from '../../protocol/message-of.js';
import type { Executor } from '../../protocol/types.js';
import { formatSandboxUnavailable, NOT_READY_DRAINING, NOT_READY_STARTING, READY } from '../texts.js';

const PROBE = { code: 'async () => true' } as const;
const REPROBE_MS = 5_000;

/** The codes that say the executor cannot run anything now. */
const UNAVAILABLE_CODES = new Set(['SANDBOX_UNAVAILABLE', 'EXECUTOR_DISPOSED']);

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.has(code);
}

export interface ReadinessState {
  ready: boolean;
  text: string;
}

export class Readiness {
  readonly #executor: Executor;
  #sandbox: 'starting' | 'available' | 'unavailable' = 'starting';
  #detail = '';
  #probing: Promise<void> | undefined;
  #lastProbe = 0;

  constructor(executor: Executor) {
    this.#executor = executor;
  }

  /** Starts the first probe; `/readyz` answers 503 until it has run. */
  start(): void {
    this.#probe();
  }

  /** An execution's failure, or success, tells what the sandbox can do now. */
  observe(error: unknown): void {
    if (isUnavailable(error)) {
      this.#sandbox = 'unavailable';
      this.#detail = messageOf(error);
    } else if (error === undefined) {
      this.#sandbox = 'available';
    }
  }

  state(draining: boolean): ReadinessState {
    if (draining) return { ready: false, text: NOT_READY_DRAINING };
    if (this.#sandbox === 'starting') return { ready: false, text: NOT_READY_STARTING };
    if (this.#sandbox === 'unavailable') {
      if (Date.now() - this.#lastProbe >= REPROBE_MS) this.#probe();
      return { ready: false, text: formatSandboxUnavailable(this.#detail) };
    }
    return { ready: true, text: READY };
  }

  /** Waits for a probe in progress (for an orderly stop). */
  async settled(): Promise<void> {
    await this.#probing;
  }

  #probe(): void {
    if (this.#probing !== undefined) return;
    this.#lastProbe = Date.now();
    this.#probing = this.#executor
      .execute(PROBE)
      .then(
        // Any result, even the program's own error (a cold start past the bound), shows the
        // sandbox runs; only a refusal with an unavailable code makes the daemon unready.
        () => this.observe(undefined),
        (error: unknown) => this.observe(isUnavailable(error) ? error : undefined),
      )
      .finally(() => {
        this.#probing = undefined;
      });
  }
}
