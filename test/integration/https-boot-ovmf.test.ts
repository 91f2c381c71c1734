/**
 * UEFI HTTPS boot with real parts (docs/https-boot.md): OVMF (Debian's OVMF_CODE_4M, PXE switched
 * off through fw_cfg so its first network option is "UEFI HTTPv4") in a QEMU guest (TCG) on a
 * bridge in a lab namespace, against rackside's DHCPv4 server and boot HTTP server with its TLS
 * listener (https-boot-child.ts). The server certificate is issued by a boot CA made by
 * agent/boot/boot-ca.ts; the firmware is given a CA through
 * `-fw_cfg name=etc/edk2/https/cacerts,file=…`, the EFI_SIGNATURE_LIST rackside encodes.
 *
 * 1. Given that CA: the firmware's HTTPClient DISCOVER gets `https://10.77.0.1:8443/uki/<mac>.efi`,
 *    fetches the unified kernel image (systemd-boot stub + the firmware tests' kernel and busybox
 *    test OS, images/uki.ts) over TLS, the stub starts the kernel with the image's command line,
 *    and the test OS reaches userspace and fetches this run's marker.
 * 2. Given another CA (same subject, another key): the handshake fails — the server records a
 *    TLS handshake failure and no request for the image, and the guest never reaches userspace.
 *
 * Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureBootCertificate, type BootCertificate } from '../../agent/boot/boot-ca.js';
import { encodeEfiSignatureLists, pemCertificates } from '../../agent/boot/efi-signature-list.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { buildUnifiedKernelImage, UKI_STUB_X64 } from '../../images/uki.js';
import { skipOrFail } from '../helpers/integration.js';
import { NetnsLab, waitFor, type LabProcess } from '../helpers/netns.js';
import { prepareFirmwareTest } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';
import type { FirmwareTestOs } from '../lab/firmware/test-os.js';
import type { HttpsBootChildConfig } from './https-boot-child.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'https-boot-child.js');
const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
const SERVER = '10.77.0.1';
const BOOT_DEADLINE_MS = 6 * 60_000;

interface ChildLine {
  type: string;
  message?: string;
  event?: { kind: string; message?: string; mac?: string; bootFile?: string; vendorClass?: string; path?: string; status?: number; tls?: boolean; completed?: boolean; method?: string; bytes?: number };
}

interface HttpsLab {
  dir: string;
  lines: ChildLine[];
  events(): NonNullable<ChildLine['event']>[];
  serial(): Promise<string>;
  guest: LabProcess;
  uki: string;
  nonce: string;
}

function hyphen(mac: string): string {
  return mac.replaceAll(':', '-');
}

/** The test OS as a unified image whose command line boots it on `mac` and points it at the plain boot HTTP listener for its marker. */
async function unifiedImage(os: FirmwareTestOs, dir: string, mac: string): Promise<string> {
  const cmdline = `console=ttyS0,115200 BOOTIF=01-${hyphen(mac)} rackside.url=http://${SERVER}:8081 panic=-1`;
  const built = await buildUnifiedKernelImage({ kernel: os.vmlinuz, initrds: [os.initrd], cmdline }, join(dir, 'uki-store'));
  const served = join(dir, 'uki');
  await mkdir(served, { recursive: true });
  await link(built.path, join(served, `${hyphen(mac)}.efi`));
  return `/uki/${hyphen(mac)}.efi`;
}

/** The namespace, the boot services child (certificate of `serverCert`) and an OVMF guest trusting `firmwareCa`. */
async function startHttpsLab(t: TestContext, lab: NetnsLab, os: FirmwareTestOs, name: string, mac: string, serverCert: BootCertificate, firmwareCa: string): Promise<HttpsLab> {
  const dir = await mkdtemp(join(tmpdir(), `rackside-https-boot-${name}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ns = await lab.namespace(name);
  await lab.exec(ns, 'ip', ['link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0']);
  await lab.exec(ns, 'ip', ['tuntap', 'add', 'tap0', 'mode', 'tap']);
  await lab.exec(ns, 'ip', ['link', 'set', 'tap0', 'master', 'br0', 'up']);
  await lab.exec(ns, 'ip', ['link', 'set', 'br0', 'up']);
  await lab.exec(ns, 'ip', ['addr', 'add', `${SERVER}/24`, 'dev', 'br0']);
  await lab.exec(ns, 'ip', ['link', 'set', 'lo', 'up']);

  const uki = await unifiedImage(os, dir, mac);
  const nonce = randomBytes(8).toString('hex');
  await mkdir(join(dir, 'ramdisk'));
  await writeFile(join(dir, 'ramdisk', 'marker'), `${nonce}\n`);
  const target: BootTarget = { host: name, unifiedImage: uki, plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: `https://${SERVER}:8443` } };
  const config: HttpsBootChildConfig = {
    interface: 'br0', serverAddress: SERVER, range: { subnet: '10.77.0.0/24', first: '10.77.0.100', last: '10.77.0.200' },
    stateDir: join(dir, 'state'), targets: { [mac]: target }, mounts: { uki: join(dir, 'uki'), ramdisk: join(dir, 'ramdisk') },
    certPath: serverCert.certPath, keyPath: serverCert.keyPath,
  };
  // The listener presents the chain (server certificate, then the CA).
  config.certPath = join(dir, 'chain.pem');
  await writeFile(config.certPath, serverCert.chainPem);
  const child = lab.spawn(ns, process.execPath, [CHILD, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: ChildLine[] = [];
  if (child.child.stdout === null) throw new Error('child has no stdout');
  createInterface({ input: child.child.stdout }).on('line', (line) => { lines.push(JSON.parse(line) as ChildLine); });
  await waitFor(() => lines.find((l) => l.type === 'ready' || l.type === 'error'), 'the boot services child');
  const failed = lines.find((l) => l.type === 'error');
  if (failed !== undefined) throw new Error(`boot services failed: ${failed.message ?? ''}\n${child.stderr()}`);

  const cacerts = join(dir, 'cacerts.esl');
  await writeFile(cacerts, encodeEfiSignatureLists(pemCertificates(firmwareCa)));
  const vars = join(dir, 'OVMF_VARS_4M.fd');
  await copyFile(OVMF_VARS, vars);
  const serialPath = join(dir, 'serial.log');
  const guest = lab.spawn(ns, 'qemu-system-x86_64', [
    '-nodefaults', '-no-user-config', '-machine', 'q35,graphics=off', '-accel', 'tcg', '-m', '768', '-smp', '1', '-display', 'none',
    '-serial', `file:${serialPath}`,
    '-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${vars}`,
    // PXE off: the first network boot option is UEFI HTTPv4 (test/lab/firmware/firmware-guest.ts).
    '-fw_cfg', 'name=opt/org.tianocore/IPv4PXESupport,string=no', '-fw_cfg', 'name=opt/org.tianocore/IPv6PXESupport,string=no',
    '-fw_cfg', `name=etc/edk2/https/cacerts,file=${cacerts}`,
    '-netdev', 'tap,id=n0,ifname=tap0,script=no,downscript=no', '-device', `virtio-net-pci,netdev=n0,mac=${mac},romfile=,bootindex=1`, '-boot', 'strict=on',
  ]);
  return {
    dir, lines, guest, uki, nonce,
    events: () => lines.filter((l) => l.type === 'event' && l.event !== undefined).map((l) => l.event as NonNullable<ChildLine['event']>),
    serial: () => readFile(serialPath, 'utf8').catch(() => ''),
  };
}

/** Root, QEMU, OVMF, objcopy, openssl and the systemd-boot stub, then the test OS; undefined when skipped. */
async function prerequisites(t: TestContext): Promise<{ lab: NetnsLab; os: FirmwareTestOs } | undefined> {
  for (const [path, pkg] of [[OVMF_CODE, 'ovmf'], [UKI_STUB_X64, 'systemd-boot-efi']] as const) {
    if (!existsSync(path)) {
      skipOrFail(t, `${path} missing (Debian package ${pkg})`);
      return undefined;
    }
  }
  const lab = await NetnsLab.create(t, { tools: ['qemu-system-x86_64', 'objcopy', 'openssl'] });
  if (lab === undefined) return undefined;
  const os = await prepareFirmwareTest(t, 'ovmf-http');
  if (os === undefined) return undefined;
  return { lab, os };
}

async function failureContext(lab: HttpsLab): Promise<string> {
  return `server lines:\n${lab.lines.map((l) => JSON.stringify(l)).join('\n')}\nguest console (last 3000 characters):\n${(await lab.serial()).slice(-3000)}`;
}

test('OVMF trusting rackside\'s boot CA fetches the unified image over HTTPS and its kernel reaches userspace', { timeout: 10 * 60_000 }, async (t) => {
  const pre = await prerequisites(t);
  if (pre === undefined) return;
  const caDir = await mkdtemp(join(tmpdir(), 'rackside-https-ca-'));
  t.after(() => rm(caDir, { recursive: true, force: true }));
  const cert = await ensureBootCertificate(caDir, [SERVER]);
  const mac = '52:54:00:7c:00:01';
  const lab = await startHttpsLab(t, pre.lab, pre.os, 'https1', mac, cert, cert.caPem);
  const started = Date.now();
  try {
    await waitFor(async () => {
      // The test OS powers the guest off after its marker: read the console before the exit.
      if ((await lab.serial()).includes(`${TEST_OS_PREFIX} marker: ${lab.nonce}`)) return true;
      if (lab.guest.child.exitCode !== null) throw new Error(`QEMU exited: ${lab.guest.stderr()}`);
      return false;
    }, 'the test OS in the unified image to report its marker', BOOT_DEADLINE_MS, 500);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await failureContext(lab)}`);
  }
  t.diagnostic(`OVMF power-on → HTTPS boot of the unified image → test OS marker: ${((Date.now() - started) / 1000).toFixed(1)} s under TCG`);
  const url = `https://${SERVER}:8443${lab.uki}`;
  const events = lab.events();
  const offer = events.find((e) => e.kind === 'dhcp' && e.bootFile === url);
  assert.ok(offer !== undefined, `the firmware was offered the unified image over https:\n${await failureContext(lab)}`);
  assert.match(events.find((e) => e.kind === 'dhcp' && e.vendorClass?.startsWith('HTTPClient') === true)?.vendorClass ?? '', /^HTTPClient:Arch:00016/);
  const fetched = events.filter((e) => e.kind === 'http' && e.path === lab.uki && e.method === 'GET');
  assert.ok(fetched.some((e) => e.status === 200 || e.status === 206), `GET ${lab.uki} answered:\n${JSON.stringify(fetched)}`);
  assert.ok(fetched.every((e) => e.tls === true), 'every fetch of the image came over TLS');
  assert.ok(events.some((e) => e.kind === 'http' && e.path === '/ramdisk/marker' && e.status === 200 && e.tls !== true), 'the test OS fetched its marker from the plain listener');
  const serial = await lab.serial();
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${pre.os.kernelRelease} on x86_64`));
  assert.equal(lab.lines.filter((l) => l.type === 'tls-error').length, 0, 'no failed handshake');
  await lab.guest.stop('SIGKILL');
});

test('OVMF trusting another CA refuses rackside\'s certificate: a failed handshake, no request for the image, no kernel', { timeout: 10 * 60_000 }, async (t) => {
  const pre = await prerequisites(t);
  if (pre === undefined) return;
  const caDir = await mkdtemp(join(tmpdir(), 'rackside-https-ca-'));
  const otherDir = await mkdtemp(join(tmpdir(), 'rackside-https-other-ca-'));
  t.after(() => Promise.all([rm(caDir, { recursive: true, force: true }), rm(otherDir, { recursive: true, force: true })]));
  const cert = await ensureBootCertificate(caDir, [SERVER]);
  const other = await ensureBootCertificate(otherDir, [SERVER]);
  assert.notEqual(other.caPem, cert.caPem);
  const mac = '52:54:00:7c:00:02';
  const lab = await startHttpsLab(t, pre.lab, pre.os, 'https2', mac, cert, other.caPem);
  try {
    await waitFor(() => {
      if (lab.guest.child.exitCode !== null) throw new Error(`QEMU exited: ${lab.guest.stderr()}`);
      return lab.lines.some((l) => l.type === 'tls-error');
    }, 'the firmware to abort the TLS handshake', BOOT_DEADLINE_MS, 500);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await failureContext(lab)}`);
  }
  const events = lab.events();
  assert.ok(events.some((e) => e.kind === 'dhcp' && e.bootFile === `https://${SERVER}:8443${lab.uki}`), `the firmware was offered the https URL:\n${await failureContext(lab)}`);
  assert.deepEqual(events.filter((e) => e.kind === 'http' && e.path === lab.uki), [], 'no request for the image got through');
  assert.doesNotMatch(await lab.serial(), new RegExp(`${TEST_OS_PREFIX} userspace reached`));
  t.diagnostic(`handshake failure as the server saw it: ${lab.lines.find((l) => l.type === 'tls-error')?.message ?? ''}`);
  await lab.guest.stop('SIGKILL');
});
