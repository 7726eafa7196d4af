// The import rules of src/, and of harness/ the one against circles, checked by `npm run lint`
// (docs/isolate.md, How it is built). Each rule's comment is what a failing import is told.

/** Code that runs only in Node: the isolate's host wing and entries, the daemon, the durable state, the register hooks, the package bundler. */
const NODE_ONLY = '^src/(isolate/host/|isolate/(index|daemon)\\.ts$|server/|durable/|register/|bundle/)';
/**
 * Code that runs anywhere: the root entry and all it reaches, the native contract, and the isolate's
 * other wings. Outside src/isolate, these folders also type-check without Node's types
 * (tsconfig.neutral.json), as the contract and workerd wings do under their own tsconfigs.
 */
const RUNTIME_NEUTRAL =
  '^src/(index\\.ts$|codemode/|events/|protocol/|record/|remote/|tracing/|wire/|isolate/contract/|isolate/workerd/)';
/** Packages that run only in Node. */
const NODE_PACKAGES = '(^|/)node_modules/(ws|prom-client|proxy-protocol-js|node-sqlite3-wasm|workerd|esbuild|semver)/';

/**
 * Rules that hold folders to floors, given top first: a folder imports only from its own floor and
 * the floors below it. `path` makes a floor's folders into a path pattern.
 */
function floorRules(prefix, where, floors, path) {
  return floors.slice(1).map((floor, index) => {
    const above = floors.slice(0, index + 1).flat();
    return {
      name: `${prefix}-${floor.join('-')}-upward`,
      comment: `${where}${floor.join(`/, ${where}`)}/ sits below ${where}${above.join(`/, ${where}`)}/ and may not import from there: move what both need down a floor.`,
      severity: 'error',
      from: { path: path(floor) },
      to: { path: path(above) },
    };
  });
}

/**
 * The host wing's floors, top first: a folder imports only from the floors below it (and from the
 * contract). A path ending in `/` is a folder; `options` is both the folder and its entry, options.ts.
 */
const HOST_FLOORS = [['executor'], ['pool'], ['run'], ['member'], ['options'], ['confinement', 'relay', 'sandbox']];
const host = (names) => `^src/isolate/host/(${names.join('|')})(/|\\.ts$)`;

/**
 * The floors of src/'s top-level folders, top first, as the imports run (docs/isolate.md, How it is
 * built): the entries a host starts from, then the executors and the package bundler, the dialect
 * and its record (one floor: a replay drives a CodemodeExecutor, which records), the live events,
 * tracing and the wire, and the native contract under all. The root entry, src/index.ts, stands
 * above them all.
 */
const SRC_FLOORS = [
  ['server', 'durable', 'register'],
  ['bundle', 'isolate', 'remote'],
  ['codemode', 'record'],
  ['events'],
  ['tracing', 'wire'],
  ['protocol'],
];
const top = (names) => `^src/(${names.join('|')})/`;

/**
 * How code outside src/isolate enters it: index.ts (the package's /isolate entry) and daemon.ts
 * (what the daemon reads beyond it).
 */
const ISOLATE_ENTRIES = '^src/isolate/(index|daemon)\\.ts$';

export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'This import closes an import circle: move what both modules need into a module of its own.',
      severity: 'error',
      from: { path: '^(src|harness)/' },
      to: { circular: true },
    },
    {
      name: 'isolate-workerd-to-host',
      comment:
        'The workerd wing runs inside workerd and may not import the host wing: share it through src/isolate/contract/.',
      severity: 'error',
      from: { path: '^src/isolate/workerd/' },
      to: { path: '^src/isolate/(host/|(index|daemon)\\.ts$)' },
    },
    {
      name: 'isolate-host-to-workerd',
      comment:
        'The host wing runs in Node and may not import the workerd wing: share it through src/isolate/contract/.',
      severity: 'error',
      from: { path: '^src/isolate/(host/|(index|daemon)\\.ts$)' },
      to: { path: '^src/isolate/workerd/' },
    },
    {
      name: 'isolate-contract-to-wing',
      comment: 'The contract is what both wings read, so it imports neither: move the piece into the contract.',
      severity: 'error',
      from: { path: '^src/isolate/contract/' },
      to: { path: '^src/isolate/(host/|workerd/|(index|daemon)\\.ts$)' },
    },
    ...floorRules('isolate-host', 'host/', HOST_FLOORS, host),
    ...floorRules('src', 'src/', SRC_FLOORS, top),
    {
      name: 'isolate-through-its-entries',
      comment:
        'Code outside src/isolate imports it only through src/isolate/index.ts (the /isolate entry) or src/isolate/daemon.ts (what the daemon reads beyond it): export the piece from one of them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/isolate/' },
      to: { path: '^src/isolate/', pathNot: ISOLATE_ENTRIES },
    },
    {
      name: 'node-builtin-outside-node-code',
      comment: `A Node built-in is imported outside the Node-only code (${NODE_ONLY}): the root entry must bundle for a Worker without nodejs_compat, and the contract and workerd wings run in workerd. Move the Node part into the Node-only code.`,
      severity: 'error',
      from: { path: '^src/', pathNot: NODE_ONLY },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'node-code-from-neutral-code',
      comment:
        'Runtime-neutral code (the root entry, codemode, events, protocol, record, remote, tracing, wire, the contract and workerd wings) may not import Node-only code or a Node-only package.',
      severity: 'error',
      from: { path: RUNTIME_NEUTRAL },
      to: { path: [NODE_ONLY, NODE_PACKAGES] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: they tie modules as much for a reader, and a circle of them is one.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // workerd's own modules, and the caps module the supervisor loads beside the harness.
    exclude: { path: '^(cloudflare:|__codemode_)' },
  },
};
