/**
 * The member's caps, as a run's dynamic worker reads them: a JSON module the supervisor loads
 * beside the harness (supervisor.ts), copied into a frozen object when the harness is
 * evaluated, before any user module, so no program can change its own caps.
 */
// sandbox-constants.ts `LIMITS_MODULE`: a module of the dynamic worker (esbuild keeps it external).
import limitsModule from '__codemode_limits.json';
import type { SandboxLimits } from '../contract/sandbox-settings.js';

export const limits: Readonly<SandboxLimits> = Object.freeze({
  maxLogLines: limitsModule.maxLogLines,
  maxLogBytes: limitsModule.maxLogBytes,
  maxToolArgsBytes: limitsModule.maxToolArgsBytes,
  maxConcurrentToolCalls: limitsModule.maxConcurrentToolCalls,
  maxConcurrentToolArgsBytes: limitsModule.maxConcurrentToolArgsBytes,
});
