/**
 * `@supolka/cloudflare-codemode-executor/bundle`: npm packages for the sandbox, as a module map
 * (docs/packages.md). Node only: it reads the host's node_modules and runs esbuild.
 */
export { BundleRefusal } from './bundle-one.js';
export { bundlePackages, type PackageModule, type PackageModuleMap } from './bundle-packages.js';
export { BUNDLE_ROWS, type BundleOptions } from './options.js';
