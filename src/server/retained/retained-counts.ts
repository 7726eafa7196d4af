// A module of its own: the server, the metrics and the class that counts them all name it, and the
// public declarations must not reach that class's module, whose stub type names Symbol.dispose (a
// lib a host's tsconfig may not have).
/** Retained executions the daemon holds: of connections still open, and of connections gone. */
export interface RetainedCounts {
  open: number;
  gone: number;
}
