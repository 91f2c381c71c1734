import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BootDecision, BootQuery } from '../../../../bootsvc/boot-lookup.js';
import { describeArchType } from '../../../../bootsvc/dhcp/client-info.js';
import { decideBoot, type BootFileOptions } from '../../../../bootsvc/ipxe/boot-files.js';
import type { BootPlan, BootTarget } from '../../../../bootsvc/ipxe/boot-plan.js';

const BASE = 'http://10.0.0.1:8081';
const MAC = '52:54:00:12:34:56';
const SCRIPT = `${BASE}/boot/52-54-00-12-34-56.ipxe`;
const RAMDISK: BootPlan = { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: BASE, token: 'x'.repeat(20) };

/** A query as the DHCP classifier would build it for option 93 = `archType`. */
function query(archType: number | undefined, extra: Partial<BootQuery> = {}): BootQuery {
  const info = archType === undefined ? { arch: 'unknown' as const, firmware: 'unknown' as const, http: false } : describeArchType(archType);
  return {
    mac: MAC,
    arch: info.arch,
    firmware: info.firmware,
    transport: info.http ? 'http' : 'tftp',
    isIpxe: false,
    ...(archType === undefined ? {} : { archType }),
    ...extra,
  };
}

interface Case {
  q: BootQuery;
  target?: BootTarget;
  options?: Partial<BootFileOptions>;
  expected: BootDecision | undefined;
}

const ramdisk: BootTarget = { plan: RAMDISK };
const secure: BootTarget = { plan: RAMDISK, secureBoot: true };
const HTTPS = 'https://10.0.0.1:8443';
const UKI = '/uki/52-54-00-12-34-56.efi';
const withUki: BootTarget = { plan: RAMDISK, unifiedImage: UKI };
const https: Partial<BootFileOptions> = { httpsBaseUrl: `${HTTPS}/` };

const cases: Record<string, Case> = {
  'unknown MAC → undefined (unknownHosts decides)': { q: query(0), expected: undefined },
  'BIOS (93=0) → undionly.kpxe': { q: query(0), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'undionly.kpxe', scriptUrl: SCRIPT } },
  'PXE without option 93 → BIOS undionly.kpxe': { q: query(undefined), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'undionly.kpxe', scriptUrl: SCRIPT } },
  'UEFI x64 (93=7) → ipxe.efi': { q: query(7), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: SCRIPT } },
  'UEFI x64 (93=9, pre-erratum) → ipxe.efi': { q: query(9), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: SCRIPT } },
  'UEFI x64 with snponly configured → snponly.efi': { q: query(7), target: ramdisk, options: { uefiLoader: 'snponly.efi' }, expected: { kind: 'ipxe-script', loader: 'snponly.efi', scriptUrl: SCRIPT } },
  'UEFI x64 Secure Boot → shimx64.efi': { q: query(7), target: secure, expected: { kind: 'boot-file', bootFile: 'shimx64.efi' } },
  'arm64 (93=11) → shimaa64.efi': { q: query(11), target: ramdisk, expected: { kind: 'boot-file', bootFile: 'shimaa64.efi' } },
  'arm64 Secure Boot (93=11) → shimaa64.efi': { q: query(11), target: secure, expected: { kind: 'boot-file', bootFile: 'shimaa64.efi' } },
  'HTTP boot x64 (93=16) → ipxe.efi URL': { q: query(16), target: ramdisk, expected: { kind: 'ipxe-script', loader: `${BASE}/boot/ipxe.efi`, scriptUrl: SCRIPT } },
  'HTTP boot ia32 (93=15) → nothing (no ia32 iPXE in Debian)': { q: query(15), target: ramdisk, expected: { kind: 'none' } },
  'HTTP boot arm64 (93=19) → shimaa64.efi URL': { q: query(19), target: ramdisk, expected: { kind: 'boot-file', bootFile: `${BASE}/boot/shimaa64.efi` } },
  'HTTP boot x64 Secure Boot → shimx64.efi URL': { q: query(16), target: secure, expected: { kind: 'boot-file', bootFile: `${BASE}/boot/shimx64.efi` } },
  'iPXE (user class) → script URL, loader kept': { q: query(7, { isIpxe: true, userClass: 'iPXE' }), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: SCRIPT } },
  'iPXE BIOS ROM → script': { q: query(0, { isIpxe: true }), target: ramdisk, expected: { kind: 'ipxe-script', loader: 'undionly.kpxe', scriptUrl: SCRIPT } },
  'iPXE on a Secure Boot host still gets the script (it already runs)': { q: query(7, { isIpxe: true }), target: secure, expected: { kind: 'ipxe-script', loader: 'shimx64.efi', scriptUrl: SCRIPT } },
  'HTTP boot x64, unified image, boot HTTPS on → the image over https': { q: query(16), target: withUki, options: https, expected: { kind: 'boot-file', bootFile: `${HTTPS}${UKI}` } },
  'HTTP boot x64, unified image, boot HTTPS off → ipxe.efi URL': { q: query(16), target: withUki, expected: { kind: 'ipxe-script', loader: `${BASE}/boot/ipxe.efi`, scriptUrl: SCRIPT } },
  'PXE x64 (TFTP), unified image, boot HTTPS on → ipxe.efi (PXE cannot fetch https)': { q: query(7), target: withUki, options: https, expected: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: SCRIPT } },
  'HTTP boot x64 Secure Boot, unified image → shim URL (the stub is unsigned)': { q: query(16), target: { ...withUki, secureBoot: true }, options: https, expected: { kind: 'boot-file', bootFile: `${BASE}/boot/shimx64.efi` } },
  'HTTP boot arm64, unified image → shimaa64 URL (x64 images only)': { q: query(19), target: withUki, options: https, expected: { kind: 'boot-file', bootFile: `${BASE}/boot/shimaa64.efi` } },
  'HTTP boot x64, unified image, local-disk plan → local-disk': { q: query(16), target: { plan: { kind: 'local-disk' }, unifiedImage: UKI }, options: https, expected: { kind: 'local-disk' } },
  'iPXE over HTTP, unified image → script (iPXE already runs)': { q: query(16, { isIpxe: true }), target: withUki, options: https, expected: { kind: 'ipxe-script', loader: `${BASE}/boot/ipxe.efi`, scriptUrl: SCRIPT } },
  'local-disk plan → local-disk': { q: query(7), target: { plan: { kind: 'local-disk' } }, expected: { kind: 'local-disk' } },
  'none plan → none': { q: query(0), target: { plan: { kind: 'none' } }, expected: { kind: 'none' } },
  'live ISO on BIOS → iPXE (sanboot)': { q: query(0), target: { plan: { kind: 'live-iso', iso: '/x.iso' } }, expected: { kind: 'ipxe-script', loader: 'undionly.kpxe', scriptUrl: SCRIPT } },
  'live ISO on the shim chain → none': { q: query(11), target: { plan: { kind: 'live-iso', iso: '/x.iso' } }, expected: { kind: 'none' } },
  'UEFI ia32 (93=6) → none': { q: query(6), target: ramdisk, expected: { kind: 'none' } },
  'RISC-V 64 (93=27) → none': { q: query(27), target: ramdisk, expected: { kind: 'none' } },
};

for (const [name, c] of Object.entries(cases)) {
  test(`matrix: ${name}`, () => {
    assert.deepEqual(decideBoot(c.target, c.q, { httpBaseUrl: `${BASE}/`, ...c.options }), c.expected);
  });
}
