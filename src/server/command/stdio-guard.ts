/**
 * The daemon's stdout and stderr must never end it. When the process reading them goes away (a
 * log shipper restarts, `serve | tee` ends), the next write fails with EPIPE, and Node raises
 * that as an unhandled 'error' that ends the process, and every tenant's session with it. Here
 * each stream gets an 'error' listener; once it has failed, every later write is dropped and
 * counted (`log_lines_dropped_total`), the daemon keeps serving, and the other stream, if it still
 * works, is told once.
 */
import { formatStdioBroken } from '../texts.js';

export type StdioName = 'stdout' | 'stderr';

/** Lines dropped on each stream since the guard was installed. */
export type DroppedLines = Record<StdioName, number>;

type WriteCallback = (error?: Error | null) => void;

/**
 * What the guard uses of a stream (`process.stdout` is one). Written out rather than Node's
 * `Writable`, so the `/server` entry's declarations need no `@types/node`.
 */
export interface LogStream {
  write(text: string, callback: WriteCallback): boolean;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

class GuardedStream {
  readonly name: StdioName;
  readonly #stream: LogStream;
  dropped = 0;
  #broken = false;
  /** Told once, when the stream fails. */
  readonly #failed: (name: StdioName, error: Error) => void;

  constructor(name: StdioName, stream: LogStream, failed: (name: StdioName, error: Error) => void) {
    this.name = name;
    this.#stream = stream;
    this.#failed = failed;
    stream.on('error', (error: Error) => this.#fail(error));
  }

  get broken(): boolean {
    return this.#broken;
  }

  /** Writes one line; on a failed stream (now or already) it is dropped and counted, never thrown. */
  write(text: string): void {
    if (this.#broken) {
      this.dropped += 1;
      return;
    }
    try {
      this.#stream.write(text, (error) => {
        if (error) this.dropped += 1;
      });
    } catch (error) {
      // A file descriptor written synchronously (a full disk) throws instead of emitting.
      this.dropped += 1;
      this.#fail(error as Error);
    }
  }

  #fail(error: Error): void {
    if (this.#broken) return;
    this.#broken = true;
    // Whoever else writes to the stream (console, Node's warnings) is dropped and counted too.
    const stream = this.#stream as LogStream & { write: (...args: unknown[]) => boolean };
    stream.write = (...args: unknown[]) => {
      this.dropped += 1;
      const callback = args.find((arg): arg is WriteCallback => typeof arg === 'function');
      if (callback !== undefined) queueMicrotask(() => callback());
      return true;
    };
    this.#failed(this.name, error);
  }
}

export class StdioGuard {
  readonly #streams: Record<StdioName, GuardedStream>;

  constructor(stdout: LogStream, stderr: LogStream) {
    const failed = (name: StdioName, error: Error) => {
      const other = this.#streams[name === 'stdout' ? 'stderr' : 'stdout'];
      if (!other.broken) other.write(`${formatStdioBroken(name, error)}\n`);
    };
    this.#streams = {
      stdout: new GuardedStream('stdout', stdout, failed),
      stderr: new GuardedStream('stderr', stderr, failed),
    };
  }

  /** One line to stdout (the daemon's log), newline added. */
  print(line: string): void {
    this.#streams.stdout.write(`${line}\n`);
  }

  dropped(): DroppedLines {
    return { stdout: this.#streams.stdout.dropped, stderr: this.#streams.stderr.dropped };
  }
}

let processGuard: StdioGuard | undefined;

/** The guard of this process's stdout and stderr, installed at the first call. */
export function guardProcessStdio(): StdioGuard {
  processGuard ??= new StdioGuard(process.stdout, process.stderr);
  return processGuard;
}
