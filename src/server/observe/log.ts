/**
 * The daemon's log: one line per event, stamped with the time, as text or as JSON. A line may quote
 * what a client sent (a refused message's reason, an error code), so control characters are
 * escaped here, where every line passes: no client can start a line of its own.
 */
import { formatListening } from '../texts.js';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** What the daemon logs as when no format is asked for. */
export const DEFAULT_LOG_FORMAT: LogFormat = 'text';

/** `warn` marks a refusal or a dropped client; everything else is `info`. */
type LogLevel = 'info' | 'warn';

/** What the server calls for each event; the sink decides the format. */
export type LogSink = (message: string, level?: LogLevel) => void;

// C0 and C1 controls, DEL, the two Unicode line separators, and the backslash, so an escape in the
// log always means an escaped character, never one a client typed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

/** Control characters as escapes (`\n`, `\x1b`, `\u2028`, and `\\` for a backslash), so one event is one line. */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL, (char) => {
    const named = NAMED[char];
    if (named !== undefined) return named;
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** One log line, without its newline. */
export function formatLogLine(format: LogFormat, time: Date, level: LogLevel, message: string): string {
  if (format === 'json') {
    // JSON.stringify escapes C0 controls itself; the line separators and C1 are escaped too.
    return JSON.stringify({ time: time.toISOString(), level, msg: message }).replace(
      /[\u007f-\u009f\u2028\u2029]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  return `${time.toISOString()} ${level} ${escapeControlCharacters(message)}`;
}

/** A text line is `<ISO time> <level> <message>`. */
const TEXT_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?:info|warn) (.*)$/;

/** The message of one log line in either format, or undefined for a line that is neither. */
export function messageOfLogLine(line: string): string | undefined {
  const text = TEXT_LINE.exec(line);
  if (text) return text[1];
  try {
    const json = JSON.parse(line) as { msg?: unknown } | null;
    return typeof json?.msg === 'string' ? json.msg : undefined;
  } catch {
    return undefined;
  }
}

/** The address a `listening on <url>` line announces, for a supervisor that started the daemon with `--port 0`. */
export function listeningUrlOf(line: string): string | undefined {
  const message = messageOfLogLine(line);
  const prefix = formatListening('');
  return message?.startsWith(prefix) ? message.slice(prefix.length) : undefined;
}

/** A sink writing formatted lines to `write` (stdout in the daemon). */
export function lineSink(
  format: LogFormat,
  write: (line: string) => void,
  now: () => Date = () => new Date(),
): LogSink {
  return (message, level = 'info') => write(formatLogLine(format, now(), level, message));
}
