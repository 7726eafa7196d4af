/** The modules the supervisor loads beside the harness in every run's dynamic worker. */
declare module '__codemode_limits.json' {
  const limits: import('../contract/sandbox-settings.js').SandboxLimits;
  export default limits;
}
