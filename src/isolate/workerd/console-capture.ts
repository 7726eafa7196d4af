/**
 * The console capture of a run's dynamic worker: log, warn and error, the methods the reference
 * captures; the methods it leaves to the process's output are dropped. The lines are capped (count
 * and UTF-8 bytes, the executor's `limits.maxLogLines` and `limits.maxLogBytes`): past a cap one
 * marker line says so, and later lines are dropped, so the result always has room to leave.
 */
import type { LogEntry, LogLevel } from '../../protocol/types.js';
import { sandboxText } from '../contract/texts.js';
import {
  $apply,
  $captureStackTrace,
  $hasOwn,
  $Object,
  $Promise,
  $promiseResolve,
  $String,
  $then,
  utf8Bytes,
} from './intrinsics.js';
import { limits } from './sandbox-limits.js';
import type { SandboxBridge } from './types.js';

let logs: LogEntry[] = [];
/** Where each line also goes as it is captured, for a run that asked for its lines live. */
let liveBridge: SandboxBridge | null = null;
let logBytes = 0;
let logsCut = false;

/** The lines captured since the run began. */
export function capturedLogs(): LogEntry[] {
  return logs;
}

/** The run's lines go to the host as they are captured through `bridge` (`null`: only with its outcome). */
export function streamLines(bridge: SandboxBridge | null): void {
  liveBridge = bridge;
}

function ignore(): void {}

/** Hands a kept line to the live bridge; a failure there (the run is over) is no concern of the program's. */
function sendLive(index: number, entry: LogEntry): void {
  if (liveBridge === null) return;
  try {
    const sent = liveBridge.line(index, entry.level, entry.message);
    $apply($then, $apply($promiseResolve, $Promise, [sent]), [undefined, ignore]);
  } catch {
    // The bridge is gone; the line still leaves with the outcome.
  }
}

function keep(entry: LogEntry): void {
  if (logsCut) return;
  const bytes = utf8Bytes(entry.message);
  if (logs.length >= limits.maxLogLines || logBytes + bytes > limits.maxLogBytes) {
    logsCut = true;
    const marker: LogEntry = { level: 'warn', message: sandboxText.logsCut(limits.maxLogLines, limits.maxLogBytes) };
    logs[logs.length] = marker;
    sendLive(logs.length - 1, marker);
    return;
  }
  logBytes += bytes;
  logs[logs.length] = entry;
  sendLive(logs.length - 1, entry);
}

export function resetLogs(): void {
  logs = [];
  logBytes = 0;
  logsCut = false;
}

/**
 * The error with its stack taken again from the caller of `fn`, so no frame of the harness shows
 * in what user code catches (upstream's own frames are in its generated module, which a stack of
 * ours cannot name). A value that is not an object is left as it is.
 */
export function fromCaller<T>(error: T, fn: (...args: never[]) => unknown): T {
  if (error !== null && typeof error === 'object') {
    try {
      $captureStackTrace(error, fn);
    } catch {
      // A frozen or exotic object keeps the stack it has.
    }
  }
  return error;
}

// Arrows, as upstream writes them: no `prototype`, not constructible, no name, so the surface
// matches. Assigned to a property, so no name is inferred.
function capture(level: LogLevel): (...args: unknown[]) => void {
  const self: { fn: (...args: unknown[]) => void } = { fn: () => {} };
  self.fn = (...args) => {
    let message = '';
    try {
      // String(x) throws for a null-prototype object: that throw reaches user code, as upstream.
      for (let i = 0; i < args.length; i++) message += (i === 0 ? '' : ' ') + $String(args[i]);
    } catch (error) {
      throw fromCaller(error, self.fn);
    }
    keep({ level, message });
  };
  return self.fn;
}

/**
 * The console methods upstream neither captures nor replaces: workerd writes them to its process's
 * output, which upstream's logs never show. Ours would carry them to the host, against
 * `limits.maxProcessOutputBytes`, so a program that logs 1 MiB through `console.info` would end
 * where upstream's returns. They are dropped here instead, before they leave the sandbox.
 */
const DROPPED_METHODS = [
  'info',
  'debug',
  'trace',
  'dir',
  'dirxml',
  'table',
  'group',
  'groupCollapsed',
  'groupEnd',
  'count',
  'countReset',
  'assert',
  'time',
  'timeLog',
  'timeEnd',
  'timeStamp',
  'profile',
  'profileEnd',
  'clear',
] as const;

/**
 * A method that does nothing, shaped as the native one is (the surface probe reads the shape):
 * where the native owns a `prototype` (workerd's `info` and `debug` do), a plain function that
 * owns one pointing back to it; elsewhere an arrow, which owns none. Either has the native's
 * `name` and `length` and returns undefined. A proxy of the native would keep the native's
 * `prototype`, whose `constructor` is then not the method a program reads.
 */
function dropped(method: unknown): unknown {
  if (typeof method !== 'function') return method;
  // A declaration, not an arrow or a method: only a `function` owns a prototype.
  function constructible(): void {}
  const replacement = $hasOwn(method, 'prototype') ? constructible : () => {};
  $Object.defineProperty(replacement, 'name', { value: method.name, configurable: true });
  $Object.defineProperty(replacement, 'length', { value: method.length, configurable: true });
  return replacement;
}

/** Installs the capture; the harness calls it once, before any user code runs. */
export function captureConsole(): void {
  console.log = capture('log');
  console.warn = capture('warn');
  console.error = capture('error');
  const methods = console as unknown as Record<string, unknown>;
  for (const name of DROPPED_METHODS) if ($hasOwn(methods, name)) methods[name] = dropped(methods[name]);
}
