/**
 * The deployment files agree with the daemon and with each other: their command lines parse with
 * the daemon's own parser, the probes and health checks hit the admin listener's paths on its
 * port, the grace period outlasts the drain, and HAProxy sticks on the header connect() sends.
 * (No container engine runs here: the Dockerfile is checked, not built.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseCommandLine } from '../../src/server/command/cli-args.js';
import { AFFINITY_HEADER } from '../../src/wire/refusals.js';

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../deploy/${path}`, import.meta.url)), 'utf8');

function serveFlags(args: string[]) {
  const parsed = parseCommandLine(args, {});
  if (parsed.command !== 'serve') throw new Error(`not a serve command: ${args.join(' ')}`);
  return parsed.daemon;
}

interface Container {
  args: string[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  env: { name: string }[];
}

const [deployment] = parseAllDocuments(read('kubernetes/deployment.yaml')).map((doc) => doc.toJS());
const services = parseAllDocuments(read('kubernetes/service.yaml')).map((doc) => doc.toJS());
const pod = deployment.spec.template.spec;
const container: Container = pod.containers[0];
const daemon = serveFlags(container.args.map((arg) => arg.replace('$(POD_NAME)', 'codemode-executor-abc12')));
const portOf = (name: string) => container.ports.find((port) => port.name === name)!.containerPort;

const dockerfile = read('Dockerfile');
const cmd: string[] = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)![1]!);
const dockerDaemon = serveFlags(cmd);
const haproxy = read('haproxy.cfg');

describe('the Kubernetes Deployment', () => {
  it('runs a serve command the daemon accepts, on the ports it declares', () => {
    expect(daemon.port).toBe(portOf('executor'));
    expect(daemon.admin?.port).toBe(portOf('admin'));
    expect(daemon.admin?.host).toBe('0.0.0.0');
    expect(daemon.daemonId).toBe('codemode-executor-abc12');
    // The token comes from a Secret, never from the command line.
    expect(container.args).not.toContain('--token');
    expect(container.env.map((variable) => variable.name)).toContain('CODEMODE_EXECUTOR_TOKEN');
  });

  it('probes readiness on /readyz and liveness on /healthz of the admin port', () => {
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'admin' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'admin' });
  });

  it('gives a stopping pod longer than the drain timeout', () => {
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(daemon.drainTimeoutMs!);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
  });

  it('is reached through Services whose target ports the container names', () => {
    for (const service of services) {
      for (const port of service.spec.ports) expect(portOf(port.targetPort)).toBeGreaterThan(0);
      expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    }
  });
});

describe('the Dockerfile', () => {
  it('runs a serve command the daemon accepts, as a non-root user, on a slim Node base', () => {
    expect(dockerfile).toMatch(/^FROM node:\d+-\S*slim$/m);
    expect(/^USER (\S+)$/m.exec(dockerfile)?.[1]).not.toMatch(/^(root|0)$/);
    expect(/^USER /m.test(dockerfile)).toBe(true);
    expect(dockerDaemon.host).toBe('0.0.0.0');
    const exposed = /^EXPOSE (.*)$/m.exec(dockerfile)![1]!.split(' ').map(Number);
    expect(exposed).toEqual([dockerDaemon.port, dockerDaemon.admin!.port]);
  });

  it('checks its health on /healthz of the admin port', () => {
    expect(dockerfile).toMatch(
      new RegExp(`HEALTHCHECK[\\s\\S]*http://127\\.0\\.0\\.1:${dockerDaemon.admin!.port}/healthz`),
    );
  });
});

describe('deploy/haproxy.cfg', () => {
  it("checks each daemon's /readyz on the admin port, and sticks on the header connect() sends", () => {
    expect(haproxy).toMatch(/^\s*option httpchk GET \/readyz$/m);
    const servers = haproxy.split('\n').filter((line) => /^\s*server /.test(line));
    expect(servers.length).toBeGreaterThan(1);
    for (const server of servers) {
      expect(server).toMatch(new RegExp(`:${daemon.port} check port ${daemon.admin!.port}$`));
    }
    expect(haproxy).toContain(`stick on req.hdr(${AFFINITY_HEADER})`);
    expect(haproxy).toMatch(/^\s*timeout tunnel \S+$/m);
    expect(haproxy).toMatch(/^\s*retry-on .*\b503\b/m);
  });
});
