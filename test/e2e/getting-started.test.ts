// docs/getting-started.md, followed literally on a virtual rack (test/lab/virtual-rack.ts): the
// blocks the guide marks `sh run` are run and `yaml file=PATH` written, with the guide's example
// values replaced by the rack's (the maps below: the interface and addresses, the BMC, MAC,
// credentials and disk (virtio: /dev/vda) of the guest, the image server and the image's sha256, the config path,
// and `rackside` → this checkout's CLI). Two lines are added to the guide's config: a scratch
// `agent.stateDir` (not /var/lib/rackside) and `no_timer_check` on the ramdisk's kernel command
// line (TCG guests on a loaded machine fail the kernel's timer check; rack-config.ts). The
// guide's install and `systemctl` blocks are not run (no installing into this machine, no
// systemd in the namespace): the agent is started as `rackside agent --config …` in the rack's
// namespace, with its automatic ramdisk build on (RACKSIDE_RAMDISK_BUILD=auto).
//
// A clean state directory and no manual build step: the agent builds the ramdisk itself; the
// Debian packages it is made of are linked in from the images tests' package cache first, so
// the build fetches nothing (the test machine reaches no Debian mirror). Then: doctor passes;
// the host, applied while the build runs, waits for it (WaitingForRamdisk … RamdiskReady), is
// inspected and provisioned with the test's OS image; no 404 was answered on the ramdisk; and
// describe shows the host's spec.description and a Diagnosis section. The measured time of each
// step is printed (docs/getting-started.md, "How long each step took", copies them).
// Everything is killed by PID and the namespace deleted at the end, pass or fail.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { link, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { StoredEvent } from '../../agent/store/types.js';
import { findTool } from '../helpers/netns.js';
import { startRackImageServer } from '../lab/rack/image-server.js';
import { buildRackOsImage, OS_IMAGE_TOOLS } from '../lab/rack/os-image.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import { RACK_NETWORK } from '../lab/rack/rack-config.js';
import { DEBIAN_PACKAGE_CACHE, rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHostSpec } from '../lab/virtual-rack.js';
import { PHASE_DEADLINE_MS, skipOrFail, tail, timeline, waitState } from './provision-steps.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const GUIDE = join(ROOT, 'docs/getting-started.md');
const CLI = join(ROOT, 'dist/agent/cli.js');
const IMAGE_PORT = 9091;
const HOST: RackHostSpec = { name: 'node-0', bmc: 'ipmi', firmware: 'bios', memoryMb: 512, disks: [{ sizeMb: 64, serial: 'RSGUIDE001' }], mac: '52:54:00:ab:10:01' };

/** A fenced block of the guide: its info string and text. */
interface Block { info: string; text: string }

/** The fenced blocks of `markdown`, in order. */
function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ info: (m[1] ?? '').trim(), text: m[2] ?? '' }));
}

/** Replaces every key of `map` in `text` by its value. */
function substitute(text: string, map: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [from, to] of map) out = out.replaceAll(from, to);
  return out;
}

/** Runs `argv` and resolves with its exit code and output (never rejects for a non-zero exit). */
function run(argv: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    execFile(argv[0] ?? '', argv.slice(1), { env: { ...process.env, ...env }, maxBuffer: 16 << 20, timeout: 120_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, out: `${stdout}${stderr}` });
    });
  });
}

/** Hard-links every unpacked Debian package of the images tests' cache into `dir` (the agent's build cache). */
async function seedPackages(dir: string): Promise<void> {
  const from = join(DEBIAN_PACKAGE_CACHE, 'debian');
  const copy = async (src: string, dst: string): Promise<void> => {
    await mkdir(dst, { recursive: true });
    for (const entry of await readdir(src, { withFileTypes: true })) {
      const [s, d] = [join(src, entry.name), join(dst, entry.name)];
      if (entry.isDirectory()) await copy(s, d);
      else if (entry.isSymbolicLink()) await run(['cp', '-P', s, d]);
      else await link(s, d);
    }
  };
  await copy(from, join(dir, 'debian'));
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

test('docs/getting-started.md on a virtual rack: doctor, the agent builds its ramdisk, the host waits for it, is inspected and provisioned', { timeout: 15 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: false });
  const missingTools = Object.entries(OS_IMAGE_TOOLS).filter(([tool]) => findTool(tool) === undefined);
  if (!prerequisites.ok || missingTools.length > 0) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}\n${missingTools.map(([tool, pkg]) => `- ${tool} (${pkg})`).join('\n')}`);
    return;
  }
  // Only to have the Debian packages unpacked in the images tests' cache (fetched once, by apt, when absent).
  if ((await rackRamdiskOrSkip(t, { format: 'initrd' })) === undefined) return;

  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-guide-'));
  if (process.env.RACKSIDE_E2E_KEEP === '1') t.diagnostic(`keeping ${dir}`);
  else t.after(() => rm(dir, { recursive: true, force: true }));
  const image = await buildRackOsImage(dir, 'os-guide', 'node-0', 'qcow2');
  const server = await startRackImageServer(dir, [image]);
  t.after(() => server.close());

  const guide = blocks(await readFile(GUIDE, 'utf8'));
  const configBlock = guide.find((b) => b.info === 'yaml file=/etc/rackside/rackside.yaml');
  const hostBlock = guide.find((b) => b.info === 'yaml file=node-0.yaml');
  const commands = guide.filter((b) => b.info === 'sh run').map((b) => b.text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')));
  assert.ok(configBlock !== undefined && hostBlock !== undefined, 'the guide has its config and host blocks');
  assert.deepEqual(commands, [
    ['rackside doctor --config /etc/rackside/rackside.yaml'], ['rackside get events'], ['rackside apply -f node-0.yaml'], ['rackside get hosts -o wide'],
    ['rackside describe host node-0', 'rackside get events --host node-0'],
  ], 'the commands this test runs (change both together)');

  const rackDir = join(dir, 'rack');
  const network = new Map([
    ['eth1', 'br0'], ['192.0.2.1/24', `${RACK_NETWORK.agentAddress}/${RACK_NETWORK.prefixLength}`], ['192.0.2.100-192.0.2.199', RACK_NETWORK.dhcpRange],
  ]);
  const stateDir = join(rackDir, 'agent-state');
  await seedPackages(join(stateDir, 'images', 'build'));
  const rack = await startVirtualRack({
    hosts: [HOST], stateDir: rackDir, ramdiskDir: null, ramdiskBuild: 'auto', apply: false, startAgent: false,
    publish: [{ nsPort: IMAGE_PORT, socketPath: server.socketPath }],
    agentConfig: (paths) => `${substitute(configBlock.text, network)}agent:\n  stateDir: ${JSON.stringify(paths.stateDir)}\nimages:\n  ramdisk:\n    kernelParams: no_timer_check rackside.lldp_seconds=0\n`,
  });
  t.after(() => rack.stop());
  const host = rack.hosts[0];
  assert.ok(host?.ipmi !== undefined);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const values = new Map([
    ['/etc/rackside/rackside.yaml', rack.configPath], ['node-0.yaml', join(dir, 'node-0.yaml')],
    ['52:54:00:12:34:56', HOST.mac], ['ipmi://192.0.2.20:623', host.bmcAddress],
    [`username: ${b64('admin')}, password: ${b64('password')}`, `username: ${b64(host.ipmi.username)}, password: ${b64(host.ipmi.password)}`],
    ['http://192.0.2.10/images/debian-12.qcow2', `http://127.0.0.1:${IMAGE_PORT}/${basename(image.path)}`], ['0'.repeat(64), image.sha256], ['deviceName: /dev/sda', 'deviceName: /dev/vda'],
  ]);
  await writeFile(join(dir, 'node-0.yaml'), substitute(hostBlock.text, values));
  /** One guide command: `rackside …` is this checkout's CLI; doctor runs in the namespace, where br0 is. */
  const guideCommand = async (line: string): Promise<{ code: number; out: string }> => {
    const argv = substitute(line, values).split(' ');
    assert.equal(argv[0], 'rackside', line);
    const cli = [process.execPath, CLI, ...argv.slice(1)];
    const result = argv[1] === 'doctor' ? await run(['ip', 'netns', 'exec', rack.namespace, ...cli]) : await run(cli, { RACKSIDE_SERVER: rack.managementUrl });
    t.diagnostic(`$ ${line} → exit ${result.code}\n${tail(result.out, 12)}`);
    return result;
  };
  const [doctorLines, eventsLines, applyLines, watchLines, stuckLines] = commands;
  const times: string[] = [];

  // 3. doctor: no FAIL before the first start.
  let started = Date.now();
  const doctor = await guideCommand(doctorLines?.[0] ?? '');
  times.push(`rackside doctor: ${seconds(Date.now() - started)}`);
  assert.equal(doctor.code, 0, `doctor passes:\n${doctor.out}`);
  assert.match(doctor.out, /ramdisk build\s+WARN/, 'no ramdisk built yet');

  // 4. The agent starts and builds the ramdisk in the background.
  started = Date.now();
  await rack.agent.restart();
  const agentUp = Date.now();
  const buildEvents = await guideCommand(eventsLines?.[0] ?? '');
  assert.equal(buildEvents.code, 0);
  // 5. The host is applied while the build runs.
  const applied = await guideCommand(applyLines?.[0] ?? '');
  assert.equal(applied.code, 0, applied.out);
  const appliedAt = Date.now();

  // 6. Watch until provisioned (the guide's command, and the API for the deadline and the evidence).
  await waitState(t, rack, host, 'provisioned', 2 * PHASE_DEADLINE_MS);
  const provisionedAt = Date.now();
  const watch = await guideCommand(watchLines?.[0] ?? '');
  assert.equal(watch.code, 0);
  assert.match(watch.out, /^node-0\s+OK\s+provisioned\s.*first server, rack 1 slot 1$/m, 'get hosts -o wide: provisioned, with the DESCRIPTION column');

  const agentEvents = (await (await fetch(`${rack.managementUrl}/api/v1/events?limit=1000`)).json()) as { items: StoredEvent[] };
  const built = agentEvents.items.find((e) => e.reason === 'RamdiskBuild' && e.message.startsWith('built the amd64'));
  assert.ok(built !== undefined, `the agent built the ramdisk: ${agentEvents.items.filter((e) => e.reason.startsWith('Ramdisk')).map((e) => e.message).join('\n')}`);
  times.push(`agent start → ramdisk built: ${seconds(Date.parse(built.time) - started)} (${built.message}); agent ready after ${seconds(agentUp - started)}`);
  const items = await timeline(rack, 'node-0');
  // The host passes through available on its way (it has an image from the start): the state change's time.
  const availableAt = Date.parse(items.find((e) => e.reason === 'ProvisioningStateChanged' && /→ available$/.test(e.message))?.time ?? '');
  assert.ok(Number.isFinite(availableAt), 'the host was available (inspected) before provisioning');
  times.push(`apply → available: ${seconds(availableAt - appliedAt)}`, `available → provisioned: ${seconds(provisionedAt - availableAt)}`);

  const reasons = items.map((e) => e.reason);
  const waiting = reasons.indexOf('WaitingForRamdisk');
  const ready = reasons.indexOf('RamdiskReady');
  assert.ok(waiting >= 0 && ready > waiting, `the host waited for the build and went on by itself: ${reasons.join(', ')}`);
  assert.match(items[waiting]?.message ?? '', /^waiting for the amd64 ramdisk/);
  assert.ok(reasons.indexOf('InspectionStarted') > ready, 'inspection booted only once the ramdisk was built');
  const notFound = items.filter((e) => e.reason === 'HTTPRequest' && /\/ramdisk\/(vmlinuz|initrd) → 404/.test(e.message));
  assert.deepEqual(notFound.map((e) => e.message), [], 'no 404 on the ramdisk');

  // 7. What an operator reads when a host is stuck.
  const describe = await guideCommand(stuckLines?.[0] ?? '');
  assert.equal(describe.code, 0);
  assert.match(describe.out, /^ {2}Description: +first server, rack 1 slot 1$/m);
  assert.match(describe.out, /^Diagnosis:/m);
  const events = await guideCommand(stuckLines?.[1] ?? '');
  assert.equal(events.code, 0);
  assert.match(events.out, /RamdiskReady/);
  assert.ok(server.requests.some((r) => r.startsWith(`GET /${basename(image.path)}`)), `the agent fetched the image: ${JSON.stringify(server.requests)}`);
  for (const line of times) t.diagnostic(`measured: ${line}`);
});
