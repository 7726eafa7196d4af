/**
 * The host's bundle of CA certificates, for the member's view. workerd releases from late 2026
 * (1.20261123.1) read the system's CA certificates as they start, and refuse to start without
 * them ("No CA certificates were loaded from the system"). The bundle is public data and the
 * member reaches no network of its own, so it is bound read-only, at the path workerd looks at.
 */
import { existsSync } from 'node:fs';

/** Where workerd looks for a bundle, in its order (the paths its certificate loader probes). */
const CA_BUNDLE_PATHS = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/ssl/cert.pem',
];

/** The first bundle this host has, or undefined where it has none (an older workerd needs none). */
export function systemCaBundle(): string | undefined {
  return CA_BUNDLE_PATHS.find((path) => existsSync(path));
}
