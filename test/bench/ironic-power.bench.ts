/**
 * @module Power at rack scale, rackside against OpenStack Ironic 21.4 standalone (issue 27; not a
 * test: no assertions). Usage (root): node dist/test/bench/ironic-power.bench.js [--hosts 50]
 * The bench creates a network namespace, re-runs itself inside it (`--inner`), and there starts
 * HOSTS ipmi_sim BMCs on the namespace's loopback (powered off). Then, for rackside (the agent
 * as a child process, `provisioner: local`, config defaults) and then for Ironic
 * (test/lab/ironic/ironic-standalone.ts), on the same BMCs (set back to off in between) it times:
 * (1) registering HOSTS hosts until each shows its power state (rackside: apply BareMetalHosts with
 * `online: false, externallyProvisioned: true` until each left `registering` with `poweredOn`
 * false; Ironic: create `ipmi` nodes and `manage` them until each is `manageable` with
 * `power off`), (2) one power-on until the API shows it on, (3) HOSTS power-ons at once until the
 * API shows all on. One host is polled with its own GET every 0.1 s, all hosts with the list GET
 * every 0.1 s. Prints a table with the ratio rackside/Ironic and the goals. Everything is
 * stopped by PID and the namespace removed, also on failure.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeDir, scratchDir, startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { freePort } from '../helpers/local-agent.js';
import { NetnsLab } from '../helpers/netns.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { missingIpmiTools } from '../lab/ipmi/ipmitool.js';
import { hasIronic, startIronic, type Ironic } from '../lab/ironic/ironic-standalone.js';

const { values: flags } = parseArgs({ options: { hosts: { type: 'string', default: '50' }, inner: { type: 'boolean', default: false } } });
const HOSTS = Number(flags.hosts);
const LIMIT_MS = 300_000;

interface Times { register: number; one: number; all: number }

/** Polls `check` every 100 ms until true; resolves with the ms since `t0`; throws after LIMIT_MS. */
async function until(what: string, t0: number, check: () => Promise<boolean>): Promise<number> {
  while (performance.now() - t0 < LIMIT_MS) {
    if (await check()) return performance.now() - t0;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${String(LIMIT_MS)} ms`);
}

async function json(url: string, method = 'GET', body?: unknown): Promise<unknown> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${String(res.status)} ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

interface HostView { metadata: { name: string }; status: { poweredOn?: boolean; errorMessage?: string; provisioning: { state: string } } }

async function rackside(sims: readonly IpmiSim[]): Promise<Times> {
  const dir = await scratchDir('ironic-bench');
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgentProcess(dir, ['provisioner: local', 'http:', `  listen: 127.0.0.1:${String(await freePort())}`,
      'images:', `  cacheDir: ${join(dir, 'cache')}`, 'reconcile:', '  timeScale: 1'].join('\n'), 60_000);
    const api = agent.url;
    const docs: unknown[] = [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bmc', namespace: 'default' }, type: 'Opaque',
      data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') } }];
    sims.forEach((sim, i) => docs.push({ apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: `h${String(i)}`, namespace: 'default' },
      spec: { online: false, externallyProvisioned: true, bmc: { address: `ipmi://${sim.host}:${String(sim.port)}`, credentialsName: 'bmc' } } }));
    const list = async (): Promise<HostView[]> => ((await json(`${api}/api/v1/hosts`)) as { items: HostView[] }).items;
    let t0 = performance.now();
    await json(`${api}/api/v1/apply`, 'POST', docs);
    const register = await until('rackside registration', t0, async () => (await list())
      .filter((h) => h.status.provisioning.state !== 'registering' && h.status.provisioning.state !== '' && h.status.poweredOn === false).length === sims.length);
    t0 = performance.now();
    await json(`${api}/api/v1/hosts/h0/actions/power-on`, 'POST', {});
    const one = await until('rackside one power-on', t0, async () => ((await json(`${api}/api/v1/hosts/h0`)) as HostView).status.poweredOn === true);
    t0 = performance.now();
    await Promise.all(sims.slice(1).map((_, i) => json(`${api}/api/v1/hosts/h${String(i + 1)}/actions/power-on`, 'POST', {})));
    const all = await until('rackside all power-ons', t0, async () => (await list()).every((h) => h.status.poweredOn === true));
    return { register, one, all };
  } finally {
    await agent?.kill();
    await removeDir(dir);
  }
}

interface NodeView { uuid: string; name: string; power_state: string | null; provision_state: string }

async function ironic(sims: readonly IpmiSim[]): Promise<Times> {
  let server: Ironic | undefined;
  try {
    server = await startIronic(await freePort());
    const s = server;
    const nodes = async (): Promise<NodeView[]> => ((await s.call('GET', '/v1/nodes?fields=uuid,name,power_state,provision_state')).json as { nodes: NodeView[] }).nodes;
    let t0 = performance.now();
    await Promise.all(sims.map(async (sim, i) => {
      const made = await s.call('POST', '/v1/nodes', { name: `h${String(i)}`, driver: 'ipmi', driver_info: {
        ipmi_address: sim.host, ipmi_port: sim.port, ipmi_username: sim.username, ipmi_password: sim.password, ipmi_cipher_suite: 3,
      } });
      if (made.status !== 201) throw new Error(`create node: ${String(made.status)} ${JSON.stringify(made.json)}`);
      const managed = await s.call('PUT', `/v1/nodes/h${String(i)}/states/provision`, { target: 'manage' });
      if (managed.status !== 202) throw new Error(`manage: ${String(managed.status)} ${JSON.stringify(managed.json)}`);
    }));
    const register = await until('ironic registration', t0, async () => (await nodes())
      .filter((n) => n.provision_state === 'manageable' && n.power_state === 'power off').length === sims.length);
    const power = async (name: string): Promise<void> => {
      const r = await s.call('PUT', `/v1/nodes/${name}/states/power`, { target: 'power on' });
      if (r.status !== 202) throw new Error(`power on ${name}: ${String(r.status)} ${JSON.stringify(r.json)}`);
    };
    t0 = performance.now();
    await power('h0');
    const one = await until('ironic one power-on', t0, async () => ((await s.call('GET', '/v1/nodes/h0')).json as NodeView).power_state === 'power on');
    t0 = performance.now();
    await Promise.all(sims.slice(1).map((_, i) => power(`h${String(i + 1)}`)));
    const all = await until('ironic all power-ons', t0, async () => (await nodes()).every((n) => n.power_state === 'power on'));
    return { register, one, all };
  } finally {
    await server?.stop();
  }
}

function table(r: Times, i: Times): void {
  const row = (label: string, a: number, b: number): string =>
    `${label.padEnd(40)} ${(a / 1000).toFixed(1).padStart(9)} s ${(b / 1000).toFixed(1).padStart(9)} s ${(a / b).toFixed(2).padStart(8)}`;
  console.log(`${'hosts: '.padEnd(7)}${String(HOSTS)}\n${''.padEnd(40)} ${'rackside'.padStart(11)} ${'Ironic'.padStart(11)} ${'ratio'.padStart(8)}`);
  console.log(row(`register ${String(HOSTS)} until power state shown`, r.register, i.register));
  console.log(row('one power-on until the API shows it', r.one, i.one));
  console.log(row(`${String(HOSTS)} power-ons until the API shows all`, r.all, i.all));
  console.log(`goal one power-on ≤ 1 s: ${r.one <= 1000 ? 'met' : 'NOT met'}; goal ${String(HOSTS)} ≤ 0.3× Ironic: ${r.all <= 0.3 * i.all ? 'met' : 'NOT met'}`);
}

async function inner(): Promise<void> {
  const sims: IpmiSim[] = [];
  try {
    for (let i = 0; i < HOSTS; i += 8) {
      sims.push(...await Promise.all(Array.from({ length: Math.min(8, HOSTS - i) }, () => startIpmiSim({ initialPower: 0 }))));
    }
    console.log(`started ${String(sims.length)} ipmi_sim BMCs`);
    const r = await rackside(sims);
    console.log(`rackside: ${JSON.stringify(r)}`);
    await Promise.all(sims.map((sim) => writeFile(join(sim.statePath, 'power'), '0\n'))); // all off again
    const i = await ironic(sims);
    console.log(`ironic: ${JSON.stringify(i)}`);
    table(r, i);
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
  }
}

async function outer(): Promise<void> {
  const missing = [...missingIpmiTools(), ...(hasIronic() ? [] : ['ironic (apt-get install ironic-api ironic-conductor python3-ironic)'])];
  if (missing.length > 0) {
    console.log(`skipped: missing ${missing.join(', ')}`);
    return;
  }
  const lab = await NetnsLab.open();
  try {
    const ns = await lab.namespace('ironic');
    const run = lab.spawn(ns, process.execPath, [fileURLToPath(import.meta.url), '--inner', '--hosts', String(HOSTS)], { stdio: 'inherit' });
    const code = await run.exited;
    if (code !== 0) process.exitCode = 1;
  } finally {
    await lab.teardown();
  }
}

await (flags.inner ? inner() : outer());
