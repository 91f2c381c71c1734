/**
 * No secret in anything an end-to-end run printed or stored (issue #10, Reliability). A real
 * agent process (local provisioner, debug logging) with a management API token, a controller
 * (real HTTP, token), the embedded SSH server, three virtual Redfish BMCs (session login; one
 * HTTPS with a password rackside is never given; one for a virtual-media host) and two ipmi_sim BMCs (one given a wrong
 * password). Every credential is a unique canary; the BMC Secrets and a userData Secret are
 * applied as metal3 Secrets (through the CLI with the token, and over SSH from stdin).
 * The hosts go: Redfish — registration → fast inspection → available → provisioning (image
 * cache, config drive, a simulated ramdisk: clean + deploy) → provisioned → deprovisioning
 * (clean) → available → deleted, once network-booting and once by virtual media (the per-host
 * ISO with the token in its overlay, read by the simulated ramdisk from what the BMC was given);
 * IPMI — registration → available → powered on → deleted;
 * the wrong passwords → registration error → deleted. Also refused: a wrong API token (fetch and
 * CLI), a previous boot's ramdisk token, `rackside bmc` with wrong passwords.
 * Then everything printed and stored is collected — the agent's stdout/stderr, every CLI and SSH
 * command's output, every management API GET (hosts, events, timelines, firmware, secrets,
 * status, sync, ssh, the event stream, /metrics, the status page HTML, OpenAPI), the decompressed
 * summaries the controller received, every file of the state dir and image cache (raw bytes),
 * and every LevelDB entry decoded — and scanned for every canary (raw, base64 at any alignment,
 * hex) and for every ramdisk token seen (allowed only in the `nodes` entries that hold them and
 * the raw database files carrying those entries). Zero hits, each hit named with its place.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { BareMetalHost } from '../../agent/host/types.js';
import { CLI, removeDir, scratchDir, startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';
import { freePort, freeUdpPort, waitFor } from '../helpers/local-agent.js';
import { collectFiles, dumpLevelDb, formatHits, makeCanary, scanArtifacts, type Artifact, type Secret } from '../helpers/secret-scanner.js';
import { SimRamdisk } from '../helpers/sim-ramdisk.js';
import { writeFakeRamdiskIso } from '../helpers/fake-ramdisk-iso.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { virtualMac } from '../lab/redfish/payloads.js';
import { startVirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';
import { FakeController } from './sync-controller.js';

const run = promisify(execFile);
const canary = (name: string, prefix: string, options?: { coreBytes?: number; suffix?: string }): Secret => makeCanary(name, prefix, randomBytes, options);

/** One CLI (or SSH) run, kept as an artifact. */
interface Ran { code: number | null; stdout: string; stderr: string }

function spawnCollect(command: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

test('no canary credential, token or ramdisk token in anything the run printed or stored', { timeout: 180_000 }, async (t: TestContext) => {
  if (!requireTools(t, ['ipmi_sim', 'ssh', 'ssh-keygen'])) return;
  const dir = await scratchDir('secret-scan');
  const cleanups: (() => Promise<unknown>)[] = [() => removeDir(dir)];
  t.after(async () => { for (const c of cleanups.reverse()) await c().catch(() => undefined); });
  const artifacts: Artifact[] = [];
  let phaseStarted = Date.now();
  const phases: string[] = [];
  const phase = (name: string): void => { phases.push(`${name} ${((Date.now() - phaseStarted) / 1000).toFixed(1)} s`); phaseStarted = Date.now(); };
  const keep = (place: string, text: string | Buffer): void => { artifacts.push({ place, bytes: Buffer.isBuffer(text) ? text : Buffer.from(text) }); };

  // Canaries: every credential of the run is unique and random. The Redfish password carries
  // characters that URL and JSON encodings change.
  const rfUser = canary('Redfish username of scan-rf', 'canary-user');
  const rfPass = canary('Redfish password of scan-rf', 'canary-pw', { suffix: '+/="\\&' });
  const rfBadPass = canary('wrong Redfish password given for scan-rf-bad', 'canary-wrongpw', { suffix: '%20' });
  const rfBadTrue = canary('real Redfish password of scan-rf-bad (never given)', 'canary-realpw');
  const ipmiUser = canary('IPMI username of scan-ipmi', 'iu', { coreBytes: 6 });
  const ipmiPass = canary('IPMI password of scan-ipmi', 'ip', { coreBytes: 8 });
  const ipmiBadPass = canary('wrong IPMI password given for scan-ipmi-bad', 'ix', { coreBytes: 8 });
  const apiToken = canary('management API token', 'canary-api');
  const wrongApiToken = canary('a wrong API token presented', 'canary-badapi');
  const controllerToken = canary('controller token', 'canary-ctl');
  const userData = canary('userData of scan-rf', 'canary-ud');
  const controllerUrlPass = canary('password in the controller URL', 'canary-ctlurl');
  const badConfigToken = canary('a malformed management.token in a bad config', 'canary-cfgtok', { suffix: ' with spaces' });
  const badConfigControllerToken = canary('a controller.token in a bad config', 'canary-cfgctl');
  const notBase64 = canary('a Secret password that is not base64', 'canary-nb64', { suffix: '!!' });
  const yamlPass = canary('a password on a line with a YAML error', 'canary-yaml');
  const addressPass = canary('a password inside a BMC address', 'canary-addr');
  const imageUrlPass = canary('a password inside the image URL', 'canary-imgpw');
  const imageSignature = canary('a pre-signed image URL signature', 'canary-imgsig');
  const echoPass = canary('Redfish password of scan-rf-echo (its BMC echoes credentials)', 'canary-echopw');
  const canaries = [rfUser, rfPass, rfBadPass, rfBadTrue, ipmiUser, ipmiPass, ipmiBadPass, apiToken, wrongApiToken, controllerToken, userData,
    controllerUrlPass, badConfigToken, badConfigControllerToken, notBase64, yamlPass, addressPass, imageUrlPass, imageSignature, echoPass];

  // Peers: controller, BMCs, image server, SSH key.
  // The controller refuses the first pushes and echoes the credentials it was sent (debugging
  // proxies and some APIs do): the agent shows what a controller said, never its own token.
  const controller = await FakeController.start({
    respond: (delivery, index) => (index < 2 ? { status: 401, body: JSON.stringify({ error: `invalid credentials: ${String(delivery.headers.authorization)}` }) } : undefined),
  });
  cleanups.push(() => controller.close());
  const rf = await startVirtualRedfishBmc({ https: false, username: rfUser.value, password: rfPass.value });
  cleanups.push(() => rf.stop());
  const rfVm = await startVirtualRedfishBmc({ https: false, username: rfUser.value, password: rfPass.value });
  cleanups.push(() => rfVm.stop());
  const rfBad = await startVirtualRedfishBmc({ https: true, username: rfUser.value, password: rfBadTrue.value });
  cleanups.push(() => rfBad.stop());
  const ipmi: IpmiSim = await startIpmiSim({ users: [{ name: ipmiUser.value, password: ipmiPass.value, privilege: 'admin' }] });
  cleanups.push(() => ipmi.stop());
  const ipmiBad: IpmiSim = await startIpmiSim({ users: [{ name: ipmiUser.value, password: ipmiPass.value, privilege: 'admin' }] });
  cleanups.push(() => ipmiBad.stop());
  // A BMC that refuses every login and echoes what it was sent in its error (some do, in
  // ExtendedInfo): rackside shows what a BMC said, never the credentials.
  const echo = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const json = (status: number, value: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value)); };
      if (req.method === 'GET' && (req.url === '/redfish/v1' || req.url === '/redfish/v1/')) {
        json(200, { '@odata.id': '/redfish/v1', RedfishVersion: '1.11.0', Systems: { '@odata.id': '/redfish/v1/Systems' }, SessionService: { '@odata.id': '/redfish/v1/SessionService' }, Links: { Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } } });
        return;
      }
      const said = `refused ${req.method ?? ''} ${req.url ?? ''} for ${body} ${Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString()}`;
      json(401, { error: { code: 'Base.1.8.GeneralError', message: said, '@Message.ExtendedInfo': [{ MessageId: 'Base.1.8.NoValidSession', Message: said }] } });
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => { echo.closeAllConnections(); return new Promise((resolve) => echo.close(resolve)); });
  const echoAddress = echo.address();
  const echoHost = `127.0.0.1:${typeof echoAddress === 'object' && echoAddress !== null ? echoAddress.port : 0}`;
  const disk = randomBytes(128 * 1024);
  const sha256 = createHash('sha256').update(disk).digest('hex');
  const upstream = createServer((req, res) => {
    if (req.url?.split('?')[0] === '/os.raw') res.writeHead(200, { 'content-length': disk.length }).end(disk);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => { upstream.closeAllConnections(); return new Promise((resolve) => upstream.close(resolve)); });
  const upstreamAddress = upstream.address();
  // A pre-signed URL with credentials: the host's own spec shows it (as kubectl does); nothing else may.
  const imageUrl = `http://ops:${imageUrlPass.value}@127.0.0.1:${typeof upstreamAddress === 'object' && upstreamAddress !== null ? upstreamAddress.port : 0}/os.raw?X-Amz-Signature=${imageSignature.value}`;
  const key = join(dir, 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key, '-C', 'ops@scan']);
  await writeFile(join(dir, 'authorized_keys'), await readFile(`${key}.pub`, 'utf8'));

  // The agent.
  const httpPort = await freePort();
  const sshPort = await freePort();
  const agentConfig = [
    'provisioner: local',
    'management:', '  listen: 127.0.0.1:0', `  token: ${apiToken.value}`,
    'http:', `  listen: 127.0.0.1:${httpPort}`,
    'tftp:', `  listen: 127.0.0.1:${await freeUdpPort()}`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`,
    // (Credentials in the controller URL are refused by the config: the bad config below has them.)
    'controller:', `  url: ${controller.url}`, `  token: ${controllerToken.value}`, '  intervalSeconds: 2',
    'ssh:', `  listen: 127.0.0.1:${sshPort}`, `  authorizedKeys: ${join(dir, 'authorized_keys')}`,
    'reconcile:', '  timeScale: 0.01',
    'log:', '  level: debug',
  ].join('\n');
  // The built ISO virtual-media hosts boot (a stand-in: the per-host overlay is what matters here).
  await writeFakeRamdiskIso(join(dir, 'cache', 'ramdisk'));
  const agent: AgentProcess = await startAgentProcess(dir, agentConfig);
  cleanups.push(() => agent.kill());
  const boot = `http://127.0.0.1:${httpPort}`;
  const env = { ...process.env, RACKSIDE_SERVER: agent.url, RACKSIDE_TOKEN: apiToken.value };
  const cli = async (args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv; expect?: number } = {}): Promise<Ran> => {
    const r = await spawnCollect(process.execPath, [CLI, ...args], options.env ?? env, options.stdin ?? '', 90_000);
    keep(`CLI rackside ${args.join(' ')} (stdout+stderr)`, `${r.stdout}\n${r.stderr}`);
    if (options.expect !== undefined) assert.equal(r.code, options.expect, `rackside ${args.join(' ')}: exit ${String(r.code)}\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  const ssh = async (args: string[], stdin = ''): Promise<Ran> => {
    // One command line, each word single-quoted (the agent splits it like a POSIX shell).
    const line = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    const r = await spawnCollect('ssh', ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-i', key, '-p', String(sshPort), '--', 'ops@127.0.0.1', line], process.env, stdin, 30_000);
    keep(`SSH ${args.join(' ')} (stdout+stderr)`, `${r.stdout}\n${r.stderr}`);
    return r;
  };
  const get = async (path: string, base = agent.url): Promise<string> => {
    const res = await fetch(`${base}${path}`);
    const text = await res.text();
    keep(`GET ${path} (${res.status})`, text);
    return text;
  };
  const waitHost = async (name: string, what: string, done: (h: BareMetalHost) => boolean, ramdisk?: SimRamdisk): Promise<BareMetalHost> => {
    let last: BareMetalHost | undefined;
    try {
      return await waitFor(`${name}: ${what}`, async () => {
        if (ramdisk !== undefined) await ramdisk.step();
        const res = await fetch(`${agent.url}/api/v1/hosts/${name}`);
        last = (await res.json()) as BareMetalHost;
        return done(last) ? last : undefined;
      }, 60_000);
    } catch (error) {
      const events = await (await fetch(`${agent.url}/api/v1/hosts/${name}/events?limit=60`)).text().catch(() => '');
      throw new Error(`${String(error)}; last: ${last?.status.provisioning.state ?? '?'} ${last?.status.errorType ?? ''} ${last?.status.errorMessage ?? ''}\n--- events\n${events}\n--- agent log (tail)\n${agent.output().slice(-3000)}`);
    }
  };

  // Manifests: metal3 Secrets with the canary credentials.
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const secret = (name: string, data: Record<string, string>): unknown => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'Opaque', data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
  const bmh = (name: string, mac: string, address: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): unknown => ({
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name, namespace: 'default', annotations },
    spec: { online: false, bootMACAddress: mac, bmc: { address, credentialsName: `${name}-bmc` }, automatedCleaningMode: 'metadata', rootDeviceHints: { deviceName: '/dev/vda' }, ...spec },
  });
  const rfMac = virtualMac('1', 1);
  const rfDocs = (spec: Record<string, unknown>): unknown[] => [
    secret('scan-rf-bmc', { username: rfUser.value, password: rfPass.value }),
    secret('scan-rf-user-data', { userData: `#cloud-config\n# ${userData.value}\n` }),
    bmh('scan-rf', rfMac, `redfish+http://${rf.host}/redfish/v1/Systems/1`, { inspectionMode: 'fast', ...spec }),
  ];
  // A virtual-media host: its ramdisk boots the per-host ISO (the token inside it), never PXE.
  const vmMac = '52:54:00:5c:00:06';
  const vmDocs = (spec: Record<string, unknown>): unknown[] => [
    secret('scan-vm-bmc', { username: rfUser.value, password: rfPass.value }),
    bmh('scan-vm', vmMac, `redfish-virtualmedia+http://${rfVm.host}/redfish/v1/Systems/1`, { inspectionMode: 'fast', ...spec }),
  ];
  const yaml = (docs: unknown[]): string => docs.map((d) => stringify(d)).join('---\n');
  await writeFile(join(dir, 'rf.yaml'), yaml([
    ...rfDocs({}),
    ...vmDocs({}),
    secret('scan-rf-bad-bmc', { username: rfUser.value, password: rfBadPass.value }),
    secret('scan-rf-echo-bmc', { username: 'operator', password: echoPass.value }),
    bmh('scan-rf-echo', '52:54:00:5c:00:05', `redfish+http://${echoHost}/redfish/v1/Systems/1`, {}),
    bmh('scan-rf-bad', '52:54:00:5c:00:02', `redfish://${rfBad.host}/redfish/v1/Systems/1`, { bmc: { address: `redfish://${rfBad.host}/redfish/v1/Systems/1`, credentialsName: 'scan-rf-bad-bmc', disableCertificateVerification: true } }),
  ]));

  // Refused: a wrong token (fetch and CLI) — its value must not be echoed either.
  const refused = await fetch(`${agent.url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${wrongApiToken.value}` }, body: JSON.stringify(rfDocs({})) });
  keep('POST /api/v1/apply with a wrong token (answer)', await refused.text());
  assert.equal(refused.status, 401);
  await cli(['apply', '-f', join(dir, 'rf.yaml')], { env: { ...env, RACKSIDE_TOKEN: wrongApiToken.value }, expect: 1 });

  // Refused manifests whose error could echo a secret: a password that is not base64, a YAML
  // error on the password's line, credentials inside the BMC address.
  await cli(['apply', '-f', '-'], { stdin: `apiVersion: v1\nkind: Secret\nmetadata: {name: x-bmc, namespace: default}\ndata:\n  username: YWRtaW4=\n  password: "${notBase64.value}"\n`, expect: 5 });
  await cli(['apply', '-f', '-'], { stdin: `apiVersion: v1\nkind: Secret\nmetadata: {name: x-bmc, namespace: default}\nstringData:\n  password: ${yamlPass.value}: [\n  username: x\n`, expect: 5 });
  await cli(['apply', '-f', '-'], { stdin: `apiVersion: v1\nkind: Secret\nmetadata: {name: x-bmc, namespace: default}\nstringData:\n  password: "${yamlPass.value}\n  username: x\n`, expect: 5 });
  await cli(['apply', '-f', '-'], { stdin: yaml([bmh('x', '52:54:00:5c:00:09', `redfish://admin:${addressPass.value}@${rf.host}/redfish/v1/Systems/1`, {})]), expect: 5 });
  const badJson = await fetch(`${agent.url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiToken.value}` }, body: JSON.stringify(secret('x-bmc', { username: 'admin' })).replace('}}', `, "password": {"nested": "${notBase64.value}"}}}`) });
  keep(`POST /api/v1/apply, a Secret with an object for a password (answer ${badJson.status})`, await badJson.text());
  assert.equal(badJson.status, 400);
  // A config with a malformed token and a wrong controller URL: the agent refuses it, doctor reports it.
  await writeFile(join(dir, 'bad.yaml'), `agent:\n  stateDir: ${join(dir, 'bad-state')}\nmanagement:\n  token: "${badConfigToken.value}"\ncontroller:\n  url: "https://ops:${controllerUrlPass.value}@127.0.0.1/push"\n  token: ["${badConfigControllerToken.value}"]\n`);
  await cli(['agent', '--config', join(dir, 'bad.yaml')], { expect: 2 });
  await cli(['doctor', '--config', join(dir, 'bad.yaml'), '--timeout', '1s'], { expect: 1 });

  // Apply: the Redfish hosts with the CLI, the IPMI hosts over SSH from stdin.
  await cli(['apply', '-f', join(dir, 'rf.yaml')], { expect: 0 });
  const noInspect = { 'inspect.metal3.io': 'disabled' };
  const sshApply = await ssh(['apply', '-f', '-'], yaml([
    secret('scan-ipmi-bmc', { username: ipmiUser.value, password: ipmiPass.value }),
    bmh('scan-ipmi', '52:54:00:5c:00:03', `ipmi://127.0.0.1:${ipmi.port}`, {}, noInspect),
    secret('scan-ipmi-bad-bmc', { username: ipmiUser.value, password: ipmiBadPass.value }),
    bmh('scan-ipmi-bad', '52:54:00:5c:00:04', `ipmi://127.0.0.1:${ipmiBad.port}`, {}, noInspect),
  ]));
  assert.equal(sshApply.code, 0, sshApply.stderr);

  await waitHost('scan-rf', 'available after fast inspection', (h) => h.status.provisioning.state === 'available' && h.status.hardware !== undefined);
  await waitHost('scan-ipmi', 'available', (h) => h.status.provisioning.state === 'available');
  const rfRefused = await waitHost('scan-rf-bad', 'a registration error', (h) => h.status.errorType === 'registration error');
  const ipmiRefused = await waitHost('scan-ipmi-bad', 'a registration error', (h) => h.status.errorType === 'registration error');
  const echoRefused = await waitHost('scan-rf-echo', 'a registration error', (h) => h.status.errorType === 'registration error');
  t.diagnostic(`an echoing BMC: "${echoRefused.status.errorMessage}"`);
  t.diagnostic(`wrong passwords: "${rfRefused.status.errorMessage}" / "${ipmiRefused.status.errorMessage}"`);

  phase('registered');

  // Provision scan-rf through a simulated ramdisk, then deprovision it — through a flaky BMC
  // first (dropped sessions: a new login; 503s, resets and HTML error pages: retries, warnings
  // in the log with the error, TransientFailure events).
  rf.state.dropSessions();
  for (const fault of [{ kind: 'status', status: 503, times: 4 }, { kind: 'reset', times: 2 }, { kind: 'html', status: 502, times: 2 }] as const) rf.state.inject({ ...fault });
  const ramdisk = new SimRamdisk(boot, rfMac);
  await cli(['apply', '-f', '-'], { stdin: yaml(rfDocs({ online: true, image: { url: imageUrl, checksum: sha256, checksumType: 'sha256', format: 'raw' }, userData: { name: 'scan-rf-user-data', namespace: 'default' } })), expect: 0 });
  await waitHost('scan-rf', 'provisioned', (h) => h.status.provisioning.state === 'provisioned', ramdisk);
  const provisioningTokens = [...ramdisk.tokens];
  await cli(['apply', '-f', '-'], { stdin: yaml(rfDocs({ online: false })), expect: 0 });
  await waitFor('a new ramdisk boot for the deprovisioning clean', async () => {
    await ramdisk.readScript();
    return ramdisk.tokens.length > provisioningTokens.length ? true : undefined;
  });
  // A previous boot's token is refused (and recorded) — the event must not carry it.
  const stale = await ramdisk.post('heartbeat', { version: 'sim', boot_mac: null, ip: null, uptime_seconds: 1, last_command_id: null }, provisioningTokens[0]);
  assert.equal(stale.status, 401);
  await waitHost('scan-rf', 'available again', (h) => h.status.provisioning.state === 'available', ramdisk);
  assert.ok(ramdisk.handled.some((c) => c.startsWith('deploy')) && ramdisk.handled.filter((c) => c.startsWith('clean')).length >= 2, `clean, deploy, clean: ${ramdisk.handled.join(', ')}`);
  assert.equal(rf.state.faults.length, 0, 'the injected BMC faults were all answered');
  // The same through virtual media: the ISO the BMC was given carries the token.
  const vmRamdisk = new SimRamdisk(boot, vmMac).useVirtualMedia(() => rfVm.state.media.find((m) => m.inserted)?.image);
  await cli(['apply', '-f', '-'], { stdin: yaml(vmDocs({ online: true, image: { url: imageUrl, checksum: sha256, checksumType: 'sha256', format: 'raw' }, userData: { name: 'scan-rf-user-data', namespace: 'default' } })), expect: 0 });
  await waitHost('scan-vm', 'provisioned through virtual media', (h) => h.status.provisioning.state === 'provisioned', vmRamdisk);
  await cli(['apply', '-f', '-'], { stdin: yaml(vmDocs({ online: false })), expect: 0 });
  await waitHost('scan-vm', 'available again', (h) => h.status.provisioning.state === 'available', vmRamdisk);
  assert.ok(vmRamdisk.isoUrls.length >= 2 && vmRamdisk.handled.some((c) => c.startsWith('deploy')), `booted its ISO and deployed: ${vmRamdisk.handled.join(', ')}`);
  assert.ok(vmRamdisk.isoUrls.every((url) => vmRamdisk.tokens.every((token) => !url.includes(token))), 'the media URL does not carry the token');
  phase('provisioned and deprovisioned (network boot, virtual media)');
  await cli(['power', 'on', 'scan-ipmi'], { expect: 0 });
  await waitHost('scan-ipmi', 'powered on', (h) => h.status.poweredOn);

  // Everything a person reads: CLI verbs, SSH, the API, the status page, metrics.
  const reads: string[][] = [];
  for (const args of [
    ['get', 'hosts'], ['get', 'hosts', '-o', 'wide'], ['get', 'hosts', '-o', 'json'], ['get', 'hosts', '-o', 'yaml'], ['get', 'hosts', '-o', 'name'],
    ['get', 'secrets'], ['get', 'secrets', '-o', 'json'], ['get', 'secrets', '-o', 'yaml'],
    ['get', 'events'], ['get', 'events', '-o', 'json'], ['get', 'events', '-o', 'yaml'], ['get', 'events', '--host', 'scan-rf'],
    ['sync', 'status'], ['sync', 'status', '-o', 'json'], ['ssh', 'status', '-o', 'yaml'], ['version'],
    ...['scan-rf', 'scan-vm', 'scan-rf-bad', 'scan-rf-echo', 'scan-ipmi', 'scan-ipmi-bad'].flatMap((name) => [['describe', 'host', name], ['get', 'host', name, '-o', 'yaml']]),
  ]) reads.push(args);
  // Read-only commands, four at a time (each is a node process start on a busy machine).
  for (let i = 0; i < reads.length; i += 4) {
    const results = await Promise.all(reads.slice(i, i + 4).map((args) => cli(args)));
    results.forEach((r, j) => { assert.equal(r.code, 0, `rackside ${(reads[i + j] ?? []).join(' ')}: ${r.stderr}`); });
  }
  for (const name of ['scan-rf', 'scan-vm', 'scan-rf-bad', 'scan-rf-echo', 'scan-ipmi', 'scan-ipmi-bad']) {
    for (const path of [`/api/v1/hosts/${name}`, `/api/v1/hosts/${name}/events`, `/api/v1/hosts/${name}/timeline?limit=1000`, `/api/v1/hosts/${name}/firmware`, `/hosts/${name}`]) await get(path);
  }
  await ssh(['get', 'hosts', '-o', 'yaml']);
  await ssh(['describe', 'host', 'scan-rf-bad']);
  await ssh(['get', 'secrets', '-o', 'yaml']);
  // Secrets typed on a command line by mistake (the CLI refuses --password; --token works):
  // the SSH audit trail and log record command lines, never these values.
  await ssh(['--token', apiToken.value, 'get', 'hosts']);
  await ssh(['bmc', `redfish+http://${rf.host}/redfish/v1/Systems/1`, '--username', 'operator', `--password=${rfPass.value}`, 'power', 'status']);
  await cli(['bmc', `ipmi://127.0.0.1:${ipmi.port}`, '--username', ipmiUser.value, '--password', ipmiPass.value, 'power', 'status'], { expect: 2 });
  for (const path of ['/api/v1/hosts', '/api/v1/events?limit=5000', '/api/v1/secrets', '/api/v1/status', '/api/v1/sync', '/api/v1/ssh', '/api/v1/version', '/api/v1/healthz', '/api/v1/log-level', '/api/openapi.json', '/metrics', '/', `/api/v1/boot/${rfMac.replaceAll(':', '-')}/timeline`]) await get(path);
  const stream = new AbortController();
  const sse = await fetch(`${agent.url}/api/v1/events/stream`, { signal: stream.signal });
  const reader = sse.body?.getReader();
  let sseText = '';
  const stopAt = Date.now() + 1500;
  while (reader !== undefined && Date.now() < stopAt) {
    const chunk = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(() => { r(undefined); }, 300))]);
    if (chunk?.value !== undefined) sseText += Buffer.from(chunk.value).toString();
    if (chunk?.done === true) break;
  }
  stream.abort();
  keep('GET /api/v1/events/stream (1.5 s)', sseText);
  phase('read back');
  await cli(['doctor', '--config', join(dir, 'rackside.yaml'), '-o', 'json', '--timeout', '1s']);

  // `rackside bmc`, right and wrong passwords (from a file and from the environment).
  await writeFile(join(dir, 'rf.pw'), `${rfPass.value}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'ipmi.pw'), ipmiBadPass.value, { mode: 0o600 });
  await cli(['bmc', `redfish+http://${rf.host}/redfish/v1/Systems/1`, '--username', rfUser.value, '--password-file', join(dir, 'rf.pw'), 'power', 'status'], { expect: 0 });
  await cli(['bmc', `redfish://${rfBad.host}/redfish/v1/Systems/1`, '--username', rfUser.value, '--insecure', 'info'], { env: { ...env, RACKSIDE_BMC_PASSWORD: rfBadPass.value }, expect: 8 });
  await cli(['bmc', `ipmi://127.0.0.1:${ipmi.port}`, '--username', ipmiUser.value, 'power', 'status'], { env: { ...env, RACKSIDE_BMC_PASSWORD: ipmiPass.value }, expect: 0 });
  await cli(['bmc', `redfish+http://${echoHost}/redfish/v1/Systems/1`, '--username', 'operator', 'power', 'status'], { env: { ...env, RACKSIDE_BMC_PASSWORD: echoPass.value }, expect: 8 });
  await cli(['bmc', `ipmi://127.0.0.1:${ipmi.port}`, '--username', ipmiUser.value, '--password-file', join(dir, 'ipmi.pw'), 'power', 'status'], { expect: 8 });

  phase('doctor and bmc');
  // Delete everything; wait for the controller to have it all.
  for (const name of ['scan-rf', 'scan-vm', 'scan-rf-bad', 'scan-rf-echo', 'scan-ipmi', 'scan-ipmi-bad']) await cli(['delete', 'host', name, '--wait', '--timeout', '60s'], { expect: 0 });
  await get('/api/v1/events?limit=5000');
  await waitFor('the controller to have acknowledged everything', async () => {
    const s = JSON.parse(await (await fetch(`${agent.url}/api/v1/sync`)).text()) as { backlog: { hosts: number; events: number }; inflight: unknown };
    return s.backlog.hosts === 0 && s.backlog.events === 0 && s.inflight === null ? true : undefined;
  });
  await get('/api/v1/sync');
  assert.ok(controller.deliveries.length > 2 && agent.output().includes('controller refused our credentials'), 'the controller refused the first pushes');
  assert.equal(await agent.stop(), 0);
  keep('agent stdout+stderr (log level debug)', agent.output());
  await cli(['migrate', '--state-dir', join(dir, 'state')]);
  phase('deleted, synced, stopped');

  // What was stored and sent.
  for (const [i, d] of controller.deliveries.entries()) keep(`controller delivery #${i} (decompressed body)`, d.json);
  assert.ok(controller.applied.some((r) => r.hosts.some((h) => h.name === 'scan-rf')), 'the controller received host summaries');
  const stored = [...await collectFiles(join(dir, 'state'), 'state'), ...await collectFiles(join(dir, 'cache'), 'cache')];
  const entries = await dumpLevelDb(join(dir, 'state', 'db'));
  artifacts.push(...stored, ...entries);

  const tokens = [
    ...ramdisk.tokens.map((token, i): Secret => ({ name: `ramdisk token #${i + 1} of scan-rf`, value: token, core: token })),
    ...vmRamdisk.tokens.map((token, i): Secret => ({ name: `ramdisk token #${i + 1} of scan-vm (virtual media)`, value: token, core: token })),
  ];
  // The config drive's file name is unguessable because boot HTTP serves it (user data) to
  // whoever names it: a capability, kept where the deploy command is kept.
  const drives = [...ramdisk.configDriveUrls, ...vmRamdisk.configDriveUrls].map((url, i): Secret => {
    const name = /\/configdrive\/([^/?]+)$/.exec(url)?.[1] ?? url;
    return { name: `config drive name #${i + 1}`, value: name, core: name.slice(name.lastIndexOf('-') + 1).replace(/\.img$/, '') };
  });
  assert.ok(drives.length >= 1, 'the deploy fetched its config drive');
  t.diagnostic(`simulated ramdisk: ${ramdisk.handled.join(', ')}; ${ramdisk.tokens.length} boots`);
  assert.ok(ramdisk.tokens.length >= 2 && vmRamdisk.tokens.length >= 2, `each ramdisk booted at least twice (provisioning, deprovisioning): ${ramdisk.tokens.length}, ${vmRamdisk.tokens.length}`);
  // The ramdisk token is kept (plain) in the host's `nodes` entry, which renders the boot
  // script; the raw database files carry that entry (compacted tables keep deleted ones).
  const rawDb = /^file state\/db\/[^/]+\.(log|ldb)$/;
  // The image URL is the user's own spec: the host resource shows it (spec.image,
  // status.provisioning.image, lastAttemptedImage) as kubectl does, the store and the image
  // cache's index keep it. Nothing else may: events, logs, status page, summaries, describe.
  const hostResource = /^(GET \/api\/v1\/hosts(\/[a-z0-9-]+)? \(|CLI rackside get hosts? .*-o (json|yaml) |SSH get hosts -o yaml |leveldb hosts |file cache\/os\/meta\/)/;
  const allowed = (s: Secret, place: string): boolean =>
    ((tokens.includes(s) || drives.includes(s)) && (place.startsWith('leveldb nodes ') || rawDb.test(place))) ||
    ((s === imageUrlPass || s === imageSignature) && (hostResource.test(place) || rawDb.test(place)));

  // The scanner itself finds a canary in each form it claims to (so zero hits means something).
  const probe: Artifact[] = [
    { place: 'probe raw', bytes: Buffer.from(`x${rfPass.value}x`) },
    { place: 'probe url', bytes: Buffer.from(encodeURIComponent(rfPass.value)) },
    { place: 'probe basic', bytes: Buffer.from(`Basic ${b64(`${rfUser.value}:${rfPass.value}`)}`) },
    { place: 'probe hex', bytes: Buffer.from(Buffer.from(`k=${rfPass.value}`).toString('hex')) },
  ];
  assert.deepEqual(new Set(scanArtifacts(probe, [rfPass]).map((h) => h.place)), new Set(probe.map((p) => p.place)), 'the scanner finds every form');

  // RACKSIDE_SCAN_DUMP=DIR writes every artifact there (to read what was scanned).
  const dump = process.env.RACKSIDE_SCAN_DUMP;
  if (dump !== undefined && dump !== '') {
    await mkdir(dump, { recursive: true });
    for (const [i, a] of artifacts.entries()) await writeFile(join(dump, `${String(i).padStart(4, '0')}-${a.place.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}`), a.bytes);
  }
  const hits = scanArtifacts(artifacts, [...canaries, ...tokens, ...drives], allowed);
  const bytes = artifacts.reduce((n, a) => n + a.bytes.length, 0);
  const places = (prefix: string): number => artifacts.filter((a) => a.place.startsWith(prefix)).length;
  t.diagnostic(`scanned ${artifacts.length} artifacts, ${bytes} bytes: ${places('CLI')} CLI runs, ${places('SSH')} SSH runs, ${places('GET')} API GETs, ${places('controller')} controller deliveries, ${places('file')} files (${stored.reduce((n, a) => n + a.bytes.length, 0)} bytes), ${places('leveldb')} LevelDB entries, agent log ${agent.output().length} bytes; ${canaries.length} canaries + ${tokens.length} ramdisk tokens`);
  t.diagnostic(`phases: ${phases.join(', ')}`);
  assert.equal(hits.length, 0, `secrets found:\n${formatHits(hits)}`);
});
