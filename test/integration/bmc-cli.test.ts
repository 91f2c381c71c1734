// `rackside bmc` end to end: the built CLI (dist/agent/cli.js) as a child process against the
// virtual Redfish BMC over HTTPS with its self-signed certificate (--insecure works; without it,
// exit 10 naming the host), and against OpenIPMI's ipmi_sim with `ipmi://127.0.0.1:PORT`, the
// IPMI power results cross-checked with `ipmitool -I lanplus -C 3`. Tools come from
// test/helpers/integration.ts: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { requireTools } from '../helpers/integration.js';
import type { MemoryHostBackend } from '../lab/redfish/backend.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool } from '../lab/ipmi/ipmitool.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';

const CLI = fileURLToPath(new URL('../../agent/cli.js', import.meta.url));
const PASSWORD = 'Lab-Pa55word!';

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node dist/agent/cli.js bmc …args` with `env` added; never throws for a non-zero exit. */
function rackside(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const childEnv: Record<string, string | undefined> = { ...process.env, RACKSIDE_BMC_PASSWORD: undefined, RACKSIDE_BMC_USERNAME: undefined, ...env };
    execFile(process.execPath, [CLI, 'bmc', ...args], { encoding: 'utf8', timeout: 60_000, env: childEnv }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

function noSecrets(run: CliRun): void {
  assert.ok(!run.stdout.includes(PASSWORD) && !run.stderr.includes(PASSWORD), 'the password never appears in the output');
}

async function withRedfish(t: TestContext, body: (bmc: VirtualRedfishBmc, passwordFile: string) => Promise<void>): Promise<void> {
  if (!requireTools(t, ['openssl'])) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-bmc-cli-'));
  const passwordFile = join(dir, 'bmc.pw');
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  const bmc = await startVirtualRedfishBmc({ https: true, username: 'admin', password: PASSWORD, knobs: { powerDelayMs: 300 } });
  try {
    await body(bmc, passwordFile);
  } finally {
    await bmc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

test('redfish over HTTPS: without --insecure the self-signed certificate exits 10 naming the host', async (t) => {
  await withRedfish(t, async (bmc, passwordFile) => {
    const r = await rackside([`redfish://${bmc.host}`, '--username', 'admin', '--password-file', passwordFile, 'power', 'status']);
    assert.equal(r.code, 10, r.stderr);
    assert.ok(r.stderr.includes(`the TLS certificate of ${bmc.host} was not accepted`), r.stderr);
    assert.match(r.stderr, /--insecure/);
    assert.equal(r.stdout, '');
    noSecrets(r);
  });
});

test('redfish over HTTPS with --insecure: power status/on --wait/off, boot pxe --uefi, info, vmedia; sessions logged out', async (t) => {
  await withRedfish(t, async (bmc, passwordFile) => {
    const base = [`redfish://${bmc.host}`, '--username', 'admin', '--password-file', passwordFile, '--insecure'];
    const backend = bmc.backends.get('1') as MemoryHostBackend;
    const status = await rackside([...base, 'power', 'status']);
    assert.deepEqual(status, { code: 0, stdout: 'off\n', stderr: '' });

    const on = await rackside([...base, 'power', 'on', '--wait', '--timeout', '20s']);
    assert.equal(on.code, 0, on.stderr);
    assert.equal(on.stdout, 'power on requested; power is on\n');
    assert.equal(backend.power, 'On');

    const off = await rackside([...base, 'power', 'off', '--wait', '-o', 'json']);
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(JSON.parse(off.stdout), { address: `redfish://${bmc.host}`, action: 'off', requested: true, power: 'off' });
    assert.equal(backend.power, 'Off');

    const boot = await rackside([...base, 'boot', 'pxe', '--uefi']);
    assert.equal(boot.code, 0, boot.stderr);
    assert.deepEqual(bmc.state.systems.get('1')?.boot, { target: 'Pxe', enabled: 'Once', mode: 'UEFI' });

    const info = await rackside([...base, 'info', '-o', 'json']);
    assert.equal(info.code, 0, info.stderr);
    const report = JSON.parse(info.stdout) as { scheme: string; driver: string; info: { protocolVersion: string; probed: string[] }; schemeCapabilities: { bootPaths: string[] } };
    assert.equal(report.scheme, 'redfish');
    assert.equal(report.driver, 'redfish');
    assert.match(report.info.protocolVersion, /^Redfish /);
    assert.ok(report.info.probed.includes('virtualMedia'));
    assert.deepEqual(report.schemeCapabilities.bootPaths, ['pxe']);

    const url = 'http://127.0.0.1:9/rescue.iso';
    const insert = await rackside([...base, 'vmedia', 'insert', url]);
    assert.equal(insert.code, 0, insert.stderr);
    const media = await rackside([...base, 'vmedia', 'status', '-o', 'json']);
    const slots = (JSON.parse(media.stdout) as { slots: { device: string; inserted: boolean; imageUrl: string | null }[] }).slots;
    assert.deepEqual(slots.find((s) => s.device === 'cd'), { device: 'cd', inserted: true, imageUrl: url });
    for (const r of [status, on, off, boot, info, insert, media]) noSecrets(r);
    assert.equal(bmc.state.sessions.size, 0, 'every CLI run logged its session out');
  });
});

test('redfish: a wrong password exits 8 without echoing it', async (t) => {
  await withRedfish(t, async (bmc) => {
    const r = await rackside([`redfish://${bmc.host}`, '--username', 'admin', '--insecure', 'power', 'status'], { RACKSIDE_BMC_PASSWORD: 'not-the-password' });
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /rejected the credentials/);
    assert.ok(!r.stderr.includes('not-the-password'));
  });
});

async function withIpmiSim(t: TestContext, body: (sim: IpmiSim, base: string[], env: Record<string, string>) => Promise<void>): Promise<void> {
  if (!requireTools(t, ['ipmi_sim', 'ipmitool'])) return;
  const sim = await startIpmiSim();
  try {
    await body(sim, [`ipmi://${sim.host}:${sim.port}`, '--username', sim.username], { RACKSIDE_BMC_PASSWORD: sim.password });
  } finally {
    await sim.stop();
  }
}

/** `ipmitool -I lanplus -C 3 chassis power status` → on|off. */
async function ipmitoolPower(sim: IpmiSim): Promise<string> {
  const text = await ipmitool(sim, ['chassis', 'power', 'status'], 3);
  const m = /Chassis Power is (on|off)/.exec(text);
  assert.ok(m !== null, text);
  return m[1] ?? '';
}

test('ipmi_sim: power status/on/off agree with ipmitool -I lanplus -C 3', async (t) => {
  await withIpmiSim(t, async (sim, base, env) => {
    const first = await rackside([...base, 'power', 'status'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `${await ipmitoolPower(sim)}\n`);
    assert.equal(first.stdout, 'off\n');

    const on = await rackside([...base, 'power', 'on', '--wait', '--timeout', '10s'], env);
    assert.equal(on.code, 0, on.stderr);
    assert.equal(on.stdout, 'power on requested; power is on\n');
    assert.equal(await ipmitoolPower(sim), 'on');
    assert.deepEqual(await rackside([...base, 'power', 'status', '-o', 'json'], env),
      { code: 0, stdout: `${JSON.stringify({ address: base[0], power: 'on' }, null, 2)}\n`, stderr: '' });

    const off = await rackside([...base, 'power', 'off'], env);
    assert.equal(off.code, 0, off.stderr);
    assert.equal(await ipmitoolPower(sim), 'off');
    assert.equal((await sim.readChassis()).power, '0');
  });
});

test('ipmi_sim: boot pxe --uefi reaches the chassis program; info reports the BMC and the ipmi scheme', async (t) => {
  await withIpmiSim(t, async (sim, base, env) => {
    const boot = await rackside([...base, 'boot', 'pxe', '--uefi'], env);
    assert.equal(boot.code, 0, boot.stderr);
    assert.equal(boot.stdout, 'boot override set: pxe, uefi, next boot only\n');
    assert.equal((await sim.readChassis()).boot, 'pxe');
    assert.match(await ipmitool(sim, ['chassis', 'bootparam', 'get', '5'], 3), /Force PXE/);

    const info = await rackside([...base, 'info'], env);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /\nVendor: +MontaVista \(OpenIPMI\)\n/);
    assert.match(info.stdout, /\nProtocol: +IPMI 2\.0\n/);
    assert.match(info.stdout, /\nCapabilities \(probed\): +power, bootDevice, inventory, info\n/);
    assert.match(info.stdout, /\nScheme ipmi:\n {2}Ironic driver: +ipmi\n/);
  });
});

test('ipmi_sim: unsupported capability and action exit 9 naming the scheme; a wrong password exits 8', async (t) => {
  await withIpmiSim(t, async (_sim, base, env) => {
    const media = await rackside([...base, 'vmedia', 'status'], env);
    assert.equal(media.code, 9);
    assert.match(media.stderr, /virtual media \(capability virtualMedia\) is not supported for scheme ipmi \(ipmi driver\)/);
    const softReset = await rackside([...base, 'power', 'soft-reset'], env);
    assert.equal(softReset.code, 9);
    assert.match(softReset.stderr, /power\.setPower\(soft-reset\).*\(scheme ipmi\)/);
    const wrong = await rackside([...base, 'power', 'status'], { RACKSIDE_BMC_PASSWORD: 'wrong-password' });
    assert.equal(wrong.code, 8, wrong.stderr);
    assert.ok(!wrong.stderr.includes('wrong-password'));
  });
});
