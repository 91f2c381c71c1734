// Crash consistency of one QEMU end-to-end provision (issue #10): the virtual rack's cheapest
// guest — SeaBIOS, PXE, a virtual Redfish BMC driving QEMU over QMP — goes through the metal3
// lifecycle (registration → inspection by the ramdisk → available → provisioning: clean and
// deploy in one ramdisk boot, then a disk boot → provisioned → deprovisioning: clean → available
// → deleted) while the agent is killed with SIGKILL three times, at seeded random moments:
//   1. inspection: 0–3 s after the agent sent the ramdisk `inspect`;
//   2. deploy: 0–4 s after it sent `deploy` (the ramdisk is streaming the image to the disk);
//   3. deprovisioning: 0–1 s after it sent the deprovisioning `clean` (a metadata clean is quick).
// Each time the agent is restarted on the same state directory after a seeded 0–1.5 s.
// After every restart the host must converge: available with hardware details, provisioned with
// the written image booting (its marker on the serial console and on the disk), available again
// with the disk wiped, then gone and powered off.
//
// "No duplicated operation", defined honestly. An operation is *acknowledged* when the ramdisk's
// report of it (inventory, deploy or clean result) was accepted by the agent — the ramdisk posts
// a report until the agent takes it, and the guest's console says which reports were given up
// ("could not report …", "sending the inventory failed"). A
// crash may interrupt an operation, and an operation whose report was lost may run again; an
// acknowledged operation must never run again: after the acknowledged deploy no deploy starts
// in the guest, after the acknowledged inspection no inspection, and the host is provisioned
// exactly once (the BMC set the persistent disk boot once per acknowledged deploy). The ramdisk
// boots (BMC power-on/reset onto PXE, ramdisk starts on the console) are at most one per phase
// plus one per crash.
//
// RACKSIDE_CRASH_SEED replays a run. Everything is killed by PID and the namespace deleted at the
// end, pass or fail. Under RACKSIDE_REQUIRE_INTEGRATION=1 missing tools or root fail the test.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { ERASE_RECORD_NAMESPACE, type EraseRecord } from '../../agent/erase/record.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { verifySshsig } from '../../agent/ssh/index.js';
import { findTool } from '../helpers/netns.js';
import { prng } from '../helpers/prng.js';
import { startRackImageServer } from '../lab/rack/image-server.js';
import { buildRackOsImage, OS_IMAGE_TOOLS, readGuestDisk } from '../lab/rack/os-image.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import type { HostManifestExtras } from '../lab/rack/rack-config.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { guestRunning, manifests, PHASE_DEADLINE_MS, seconds, skipOrFail, tail, waitForGuest } from './provision-steps.js';

const SEED = Number(process.env.RACKSIDE_CRASH_SEED ?? 20261201);
const IMAGE_PORT = 9091;
const HOST: RackHostSpec = { name: 'node-k', bmc: 'redfish', firmware: 'bios', memoryMb: 512, disks: [{ sizeMb: 64, serial: 'RSCRASH001' }], mac: '52:54:00:ab:00:41' };

/** One SIGKILL of the agent. */
interface Crash {
  label: string;
  /** Delay after the trigger was seen, and the gap before the restart (seeded). */
  delayMs: number;
  gapMs: number;
  /** The host's state as last seen before the kill. */
  stateBefore: string;
  /** The host's state as first seen after the restart. */
  stateAfter: string;
}

/** The management API through crashes: undefined while the agent is down (the relay resets the connection). */
async function tryJson<T>(rack: VirtualRack, path: string): Promise<T | undefined> {
  try {
    const res = await fetch(`${rack.managementUrl}${path}`);
    return res.status === 200 ? ((await res.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

async function applyThroughCrashes(rack: VirtualRack, docs: unknown[]): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const res = await fetch(`${rack.managementUrl}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) }).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.fail('apply: the agent did not accept the manifests within 30 s');
}

/** Polls until `done(host)` (the host may be gone: undefined); tolerates the agent being down. */
async function waitHost(rack: VirtualRack, host: RackHost, what: string, done: (h: BareMetalHost | undefined) => boolean, last: { host?: BareMetalHost }): Promise<BareMetalHost | undefined> {
  const name = host.spec.name;
  const started = Date.now();
  const errors = new Set<string>();
  while (Date.now() - started < PHASE_DEADLINE_MS) {
    const res = await fetch(`${rack.managementUrl}/api/v1/hosts/${name}`).catch(() => undefined);
    if (res !== undefined) {
      const h = res.status === 200 ? ((await res.json()) as BareMetalHost) : undefined;
      if (res.status === 200 || res.status === 404) {
        if (h !== undefined) last.host = h;
        if (done(h)) return h;
        const error = h?.status.errorMessage ?? '';
        if (error !== '') errors.add(`${h?.status.provisioning.state ?? '?'}: ${error}`);
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  const items = (await tryJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=300`))?.items ?? [];
  assert.fail(`${name}: not ${what} within ${PHASE_DEADLINE_MS / 1000} s (last state ${last.host?.status.provisioning.state ?? '?'}; errors seen: ${[...errors].join(' | ') || 'none'})\n` +
    `--- timeline (tail)\n${items.slice(-40).map((e) => `${e.source} ${e.reason} ${e.message}`).join('\n')}\n--- serial (tail)\n${tail(await host.serialLog(), 40)}\n--- agent output (tail)\n${tail(rack.agent.output())}`);
}

/** Counts of what the guest's console says the ramdisk did, in order. */
function consoleRecord(serial: string): string[] {
  const marks: [RegExp, string][] = [
    [/rackside-ramdisk: agent: reporting to/, 'ramdisk-start'],
    [/rackside-ramdisk: inspect: collecting inventory/, 'inspect'],
    [/rackside-ramdisk: inspect: inventory sent/, 'inspect-acked'],
    [/rackside-ramdisk: inspect: sending the inventory failed/, 'inspect-lost'],
    [/rackside-ramdisk: deploy: writing /, 'deploy'],
    [/rackside-ramdisk: deploy: done/, 'deploy-done'],
    [/rackside-ramdisk: deploy: FAILED/, 'deploy-failed'],
    [/rackside-ramdisk: clean: mode /, 'clean'],
    [/rackside-ramdisk: clean: done/, 'clean-done'],
    [/rackside-ramdisk: (\w+): \S+ did not take the report/, 'retry'],
    [/rackside-ramdisk: could not report the result of (\w+)/, 'lost'],
  ];
  const out: string[] = [];
  for (const line of serial.split('\n')) {
    for (const [re, name] of marks) {
      const m = re.exec(line);
      if (m !== null) out.push(name === 'lost' || name === 'retry' ? `${m[1] ?? '?'}-${name}` : name);
    }
  }
  return out;
}

test('kill -9 of the agent during inspection, the image write and the deprovisioning clean of a QEMU guest: it converges, boots the image, and no acknowledged operation runs twice', { timeout: 12 * 60_000 }, async (t: TestContext) => {
  const prerequisites = checkRackPrerequisites({ ipmi: false, uefi: false });
  const missingTools = Object.entries(OS_IMAGE_TOOLS).filter(([tool]) => findTool(tool) === undefined);
  if (!prerequisites.ok || missingTools.length > 0) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}\n${missingTools.map(([tool, pkg]) => `- ${tool} (Debian package ${pkg})`).join('\n')}`);
    return;
  }
  const started = Date.now();
  const ramdisk = await rackRamdiskOrSkip(t);
  if (ramdisk === undefined) return;
  t.diagnostic(`seed ${SEED}; ramdisk ${ramdisk.built ? 'built' : 'reused'} in ${seconds(started)}`);
  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-crash-'));
  if (process.env.RACKSIDE_E2E_KEEP === '1') t.diagnostic(`keeping ${dir}`);
  else t.after(() => rm(dir, { recursive: true, force: true }));
  const image = await buildRackOsImage(dir, 'os-k', 'node-k', 'raw');
  await mkdir(join(dir, 'disk'));
  const server = await startRackImageServer(dir, [image]);
  t.after(() => server.close());
  const rack = await startVirtualRack({ hosts: [HOST], stateDir: join(dir, 'rack'), ramdiskDir: ramdisk.dir, apply: false, publish: [{ nsPort: IMAGE_PORT, socketPath: server.socketPath }] });
  t.after(() => rack.stop());
  const host = rack.hosts[0];
  assert.ok(host !== undefined);
  const name = host.spec.name;
  const rand = prng(SEED);
  const crashes: Crash[] = [];
  const last: { host?: BareMetalHost } = {};

  /** Kills the agent 0–maxDelayMs after `trigger` holds for the timeline after seq `fromSeq`, then restarts it. */
  const crashAfter = async (label: string, fromSeq: number, trigger: (e: StoredEvent) => boolean, maxDelayMs: number): Promise<void> => {
    const delayMs = Math.floor(rand() * maxDelayMs);
    const gapMs = Math.floor(rand() * 1500);
    const deadline = Date.now() + PHASE_DEADLINE_MS;
    for (;;) {
      const items = (await tryJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=1000`))?.items ?? [];
      if (items.some((e) => e.seq > fromSeq && trigger(e))) break;
      assert.ok(Date.now() < deadline, `${label}: the trigger was never seen`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, delayMs));
    const before = await tryJson<BareMetalHost>(rack, `/api/v1/hosts/${name}`);
    await rack.agent.kill();
    await new Promise((r) => setTimeout(r, gapMs));
    await rack.agent.restart();
    const after = await tryJson<BareMetalHost>(rack, `/api/v1/hosts/${name}`);
    crashes.push({ label, delayMs, gapMs, stateBefore: before?.status.provisioning.state ?? '?', stateAfter: after?.status.provisioning.state ?? '?' });
  };
  const lastSeq = async (): Promise<number> => Math.max(0, ...((await tryJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=1000`))?.items ?? []).map((e) => e.seq));

  const imageUrl = `http://127.0.0.1:${IMAGE_PORT}/${basename(image.path)}`;
  const metal3Image = { url: imageUrl, checksum: image.sha256, checksumType: 'sha256', format: 'raw' };
  const base: HostManifestExtras = { spec: { automatedCleaningMode: 'metadata', rootDeviceHints: { serialNumber: HOST.disks[0]?.serial ?? '' } } };
  const timings: string[] = [];

  // 1. Registration and inspection, killed while the ramdisk inspects.
  let phase = Date.now();
  await applyThroughCrashes(rack, manifests(host, false, base));
  const inspectCrash = crashAfter('inspection', 0, (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent inspect'), 3000);
  const inspected = await waitHost(rack, host, 'available with hardware details', (h) => h?.status.provisioning.state === 'available' && h.status.errorMessage === '' && h.status.hardware !== undefined, last);
  await inspectCrash;
  assert.equal(inspected?.status.hardware?.ramMebibytes, HOST.memoryMb, 'the inventory is the guest\'s');
  timings.push(`available ${seconds(phase)}`);

  // 2. Provisioning, killed while the ramdisk writes the image.
  phase = Date.now();
  let from = await lastSeq();
  await applyThroughCrashes(rack, manifests(host, true, { ...base, spec: { ...base.spec, image: metal3Image } }));
  const deployCrash = crashAfter('deploy', from, (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent deploy'), 4000);
  const provisioned = await waitHost(rack, host, 'provisioned', (h) => h?.status.provisioning.state === 'provisioned' && h.status.errorMessage === '', last);
  await deployCrash;
  assert.deepEqual(provisioned?.status.provisioning.image, metal3Image);
  await waitForGuest(async () => (await host.serialLog()).includes(image.bootMessage), `${name}: the written image's boot marker on the serial console`, 120_000, host);
  timings.push(`provisioned and booted ${seconds(phase)}`);
  const written = await readGuestDisk(host.paths.disks[0] ?? '', join(dir, 'disk'), []);
  assert.equal(written.marker, image.marker, 'MARKER.TXT of the written image');
  const bootsAfterDeploy = await host.bmcCalls();

  // 3. Deprovisioning, killed while the ramdisk cleans.
  phase = Date.now();
  from = await lastSeq();
  await applyThroughCrashes(rack, manifests(host, false, base));
  const cleanCrash = crashAfter('deprovisioning', from, (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent clean'), 1000);
  await waitHost(rack, host, 'available again', (h) => h?.status.provisioning.state === 'available' && h.status.errorMessage === '', last);
  await cleanCrash;
  timings.push(`deprovisioned ${seconds(phase)}`);
  const wiped = await readGuestDisk(host.paths.disks[0] ?? '', join(dir, 'disk'), []);
  assert.equal(wiped.partitions, undefined, 'no partition table after the deprovisioning clean');

  // 4. Delete.
  phase = Date.now();
  const deleted = await fetch(`${rack.managementUrl}/api/v1/hosts/${name}`, { method: 'DELETE' });
  assert.ok(deleted.status >= 200 && deleted.status < 300, `DELETE answered ${deleted.status}`);
  await waitHost(rack, host, 'gone', (h) => h === undefined, last);
  assert.equal(await guestRunning(host), false, 'the guest is powered off after the delete');
  timings.push(`deleted ${seconds(phase)}`);

  // No acknowledged operation ran twice.
  const record = consoleRecord(await host.serialLog());
  t.diagnostic(`crashes: ${crashes.map((c) => `${c.label} +${c.delayMs} ms (${c.stateBefore} → restart after ${c.gapMs} ms → ${c.stateAfter})`).join('; ')}`);
  t.diagnostic(`guest console: ${record.join(' ')}`);
  const calls = await host.bmcCalls();
  t.diagnostic(`BMC: ${calls.filter((c) => /^(powerOn|reset|powerOff|shutdown)/.test(c)).join(', ')}`);
  assert.equal(crashes.length, 3);
  const steady = new Set(['available', 'provisioned', '?']);
  assert.ok(crashes.some((c) => !steady.has(c.stateBefore)), `at least one kill caught the host mid-operation: ${JSON.stringify(crashes)}`);
  // Where each operation of `op` started on the console, for those whose report was not lost
  // (no "lost"/"FAILED" mark before the next operation or ramdisk boot). The console may not
  // show the success line: rackside powers the guest off as soon as it has the report.
  const acknowledged = (op: string): number[] => record.flatMap((m, i) => {
    if (m !== op) return [];
    const next = record.slice(i + 1).findIndex((x) => x === 'inspect' || x === 'deploy' || x === 'clean' || x === 'ramdisk-start');
    const window = next < 0 ? record.slice(i + 1) : record.slice(i + 1, i + 1 + next);
    return window.includes(`${op}-lost`) || window.includes(`${op}-failed`) ? [] : [i];
  });
  for (const op of ['inspect', 'deploy']) {
    const acked = acknowledged(op);
    assert.ok(acked.length >= 1, `an acknowledged ${op}: ${record.join(' ')}`);
    assert.ok(!record.slice((acked[0] ?? 0) + 1).includes(op), `no ${op} after the acknowledged one: ${record.join(' ')}`);
  }
  const diskBoots = bootsAfterDeploy.filter((c) => c === 'reset Hdd' || c === 'powerOn Hdd');
  assert.equal(diskBoots.length, 1, `one disk boot after the deploy: ${JSON.stringify(bootsAfterDeploy)}`);
  const ramdiskBoots = calls.filter((c) => c === 'powerOn Pxe' || c === 'reset Pxe').length;
  const ramdiskStarts = record.filter((m) => m === 'ramdisk-start').length;
  // Inspection, provisioning (clean + deploy, fast track) and deprovisioning: 3 boots, plus at most one per crash.
  assert.ok(ramdiskStarts >= 3 && ramdiskStarts <= 3 + crashes.length, `ramdisk boots: ${ramdiskStarts} (BMC PXE boots ${ramdiskBoots}): ${record.join(' ')}`);
  assert.ok(ramdiskBoots <= 3 + crashes.length, `BMC PXE boots: ${ramdiskBoots}: ${JSON.stringify(calls)}`);

  // Every clean whose result the agent took left one signed erase record, kills or not, and the
  // records outlive the host: the clean before the deploy and the deprovisioning one, plus at
  // most one per crash (a clean restarted after its result was lost is a new command).
  const records = (await tryJson<{ items: EraseRecord[] }>(rack, `/api/v1/erase-records?host=${name}`))?.items ?? [];
  const key = await tryJson<{ fingerprint: string }>(rack, '/api/v1/erase-records/signing-key');
  t.diagnostic(`erase records: ${records.map((r) => `${r.id} ${r.host.provisioningState ?? '?'} ${r.status}`).join(', ')}`);
  assert.ok(records.length >= 2 && records.length <= 2 + crashes.length, `erase records: ${JSON.stringify(records)}`);
  assert.deepEqual([...new Set(records.map((r) => r.host.provisioningState))].sort(), ['deprovisioning', 'provisioning']);
  for (const r of records) {
    assert.equal(r.status, 'ok', JSON.stringify(r));
    const document = await (await fetch(`${rack.managementUrl}/api/v1/erase-records/${r.id}`)).text();
    const signature = await (await fetch(`${rack.managementUrl}/api/v1/erase-records/${r.id}/signature`)).text();
    const verified = verifySshsig(Buffer.from(document), signature, ERASE_RECORD_NAMESPACE);
    assert.ok(verified.ok && verified.fingerprint === key?.fingerprint, `${r.id}: ${JSON.stringify(verified)}`);
  }
  t.diagnostic(`${timings.join(', ')}; total ${seconds(started)}`);
});
