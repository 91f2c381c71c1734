import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RamdiskPlan } from '../../../../bootsvc/ipxe/boot-plan.js';
import {
  renderEntryScript,
  renderIpxeScript,
  renderLiveIsoScript,
  renderLocalDiskScript,
  renderNothingScript,
  renderRamdiskScript,
} from '../../../../bootsvc/ipxe/scripts.js';
import { renderGrubConfig, renderGrubEntryConfig, grubFilePath } from '../../../../bootsvc/ipxe/grub.js';
import {
  BootRenderError,
  grubArg,
  hyphenMac,
  ipxeArg,
  ipxeText,
  kernelCommandLine,
  resolveBootUrl,
  scriptUrlFor,
} from '../../../../bootsvc/ipxe/render-text.js';
import { assertGolden } from './golden.js';

const BASE = 'http://10.0.0.1:8081';
const MAC = '52:54:00:AA:bb:01';
const TOKEN = 'tok-0123456789abcdef_XYZ';
const RAMDISK: RamdiskPlan = {
  kind: 'ramdisk',
  purpose: 'ramdisk',
  kernel: '/ramdisk/vmlinuz',
  initrds: ['/ramdisk/initrd', '/ramdisk/hosts/node-0.cpio'],
  agentUrl: 'http://10.0.0.1:8081/',
  token: TOKEN,
  extraKernelParams: ['ipa-debug=1', 'nomodeset'],
};
const DISCOVERY: RamdiskPlan = { kind: 'ramdisk', purpose: 'discovery', kernel: 'http://10.0.0.1:8081/ramdisk/vmlinuz', initrds: ['http://10.0.0.1:8081/ramdisk/initrd'], agentUrl: BASE, extraKernelParams: ['rackside.mode=discovery'] };
const ctx = { mac: MAC, host: 'node-0', baseUrl: BASE };

const goldens: Record<string, () => string> = {
  'ramdisk.ipxe': () => renderRamdiskScript(RAMDISK, ctx),
  'discovery.ipxe': () => renderRamdiskScript(DISCOVERY, { mac: MAC, baseUrl: BASE }),
  'local-disk.ipxe': () => renderLocalDiskScript(ctx),
  'live-iso.ipxe': () => renderLiveIsoScript({ kind: 'live-iso', iso: '/images/live image.iso' }, ctx),
  'nothing-first.ipxe': () => renderNothingScript({ mac: MAC, baseUrl: BASE, message: 'not a known host' }),
  'nothing-last.ipxe': () => renderNothingScript({ mac: MAC, baseUrl: BASE, message: 'not a known host', attempt: 10, maxAttempts: 10 }),
  'entry.ipxe': () => renderEntryScript(`${BASE}/`),
  'grub-entry.cfg': () => renderGrubEntryConfig(),
  'grub-ramdisk.cfg': () => renderGrubConfig(RAMDISK, { mac: MAC, host: 'node-0' }),
  'grub-ramdisk-http.cfg': () => renderGrubConfig({ ...RAMDISK, kernel: 'http://10.0.0.1:8081/ramdisk/vmlinuz', initrds: ['http://10.0.0.1/ramdisk/initrd'] }, { mac: MAC }),
  'grub-local-disk.cfg': () => renderGrubConfig({ kind: 'local-disk' }, { mac: MAC, host: 'node-0' }),
  'grub-nothing.cfg': () => renderGrubConfig({ kind: 'none', message: "host's state is \"available\"" }, { mac: MAC }),
};

for (const [name, render] of Object.entries(goldens)) {
  test(`golden: ${name}`, () => {
    assertGolden(name, render());
  });
}

test('the ramdisk script carries the agent URL, token, consoles and EFI initrd names', () => {
  const script = renderRamdiskScript(RAMDISK, ctx);
  const kernelLine = script.split('\n').find((l) => l.startsWith('kernel '));
  assert.ok(kernelLine);
  for (const part of [`${BASE}/ramdisk/vmlinuz`, 'initrd=initrd', 'initrd=initrd1', `rackside.url=${BASE}`, `rackside.token=${TOKEN}`, 'console=tty0', 'console=ttyS0,115200', 'ipa-debug=1']) {
    assert.ok(kernelLine.split(' ').includes(part), `kernel line lacks ${part}: ${kernelLine}`);
  }
  assert.ok(script.startsWith('#!ipxe\n'));
  assert.match(script, /^initrd --name initrd1 http:\/\/10\.0\.0\.1:8081\/ramdisk\/hosts\/node-0\.cpio \|\| goto failed$/m);
});

test('GRUB gets the same command line without initrd= (GRUB hands initrds over itself)', () => {
  const cfg = renderGrubConfig(RAMDISK, { mac: MAC });
  assert.match(cfg, /^ {2}if linux \/ramdisk\/vmlinuz BOOTIF=01-52-54-00-aa-bb-01 rackside\.url=http:\/\/10\.0\.0\.1:8081 rackside\.token=tok-0123456789abcdef_XYZ console=tty0 console=ttyS0,115200 ipa-debug=1 nomodeset; then$/m);
  assert.doesNotMatch(cfg, /initrd=initrd/);
});

test('the nothing-to-do script asks again with the next attempt number, then exits', () => {
  assert.match(renderNothingScript({ mac: MAC, baseUrl: BASE, attempt: 3 }), /chain --replace --autofree http:\/\/10\.0\.0\.1:8081\/boot\/52-54-00-aa-bb-01\.ipxe\?attempt=4 \|\| exit 1/);
  const last = renderNothingScript({ mac: MAC, baseUrl: BASE, attempt: 12, maxAttempts: 5 });
  assert.doesNotMatch(last, /chain/);
  assert.match(last, /^exit 1$/m);
});

test('renderIpxeScript dispatches on the plan kind', () => {
  assert.match(renderIpxeScript({ kind: 'local-disk' }, ctx), /sanboot --no-describe --drive 0x80/);
  assert.match(renderIpxeScript({ kind: 'none', message: 'custom reason' }, ctx), /custom reason/);
  assert.match(renderIpxeScript({ kind: 'live-iso', iso: 'http://mirror/x.iso' }, ctx), /sanboot --no-describe http:\/\/mirror\/x\.iso/);
  assert.match(renderIpxeScript(RAMDISK, ctx), /^boot \|\| goto failed$/m);
});

const refusedArgs: Record<string, string> = {
  'space': 'a b',
  'tab': 'a\tb',
  'newline': 'a\nchain http://evil',
  'settings expansion': 'x=${net0/ip}',
  'operator &&': '&&',
  'operator ||': '||',
  'empty': '',
  'DEL': 'a\u007f',
};
for (const [name, value] of Object.entries(refusedArgs)) {
  test(`ipxeArg refuses ${name}`, () => {
    assert.throws(() => ipxeArg(value), BootRenderError);
  });
}

test('a kernel parameter that cannot be carried safely fails the render instead of changing the script', () => {
  assert.throws(() => renderRamdiskScript({ ...RAMDISK, extraKernelParams: ['root=/dev/sda1 init=/bin/sh'] }, ctx), /whitespace/);
  assert.throws(() => renderRamdiskScript({ ...RAMDISK, extraKernelParams: ['a="b"'] }, ctx), /quote/);
  assert.throws(() => renderRamdiskScript({ ...RAMDISK, token: '${evil}' }, ctx), /expand/);
  assert.throws(() => kernelCommandLine([`x=${'a'.repeat(2100)}`]), /longer than 2047/);
  assert.throws(() => renderRamdiskScript({ ...RAMDISK, kernel: 'tftp://10.0.0.1/vmlinuz' }, ctx), /only http and https/);
});

const texts: Record<string, [string, string]> = {
  'plain': ['booting node-0', 'booting node-0'],
  'settings': ['a ${x} b', 'a $ {x} b'],
  'operators': ['x && y || z', 'x and y or z'],
  'non-ASCII and controls': ['café\u0007', 'caf??'],
};
for (const [name, [input, expected]] of Object.entries(texts)) {
  test(`ipxeText: ${name}`, () => {
    assert.equal(ipxeText(input), expected);
  });
}

const grubWords: Record<string, [string, string]> = {
  'bare': ['console=ttyS0,115200', 'console=ttyS0,115200'],
  'space': ['a b', "'a b'"],
  'dollar': ['$x', "'$x'"],
  'single quote': ["it's", "'it'\\''s'"],
  'semicolon': ['a;reboot', "'a;reboot'"],
};
for (const [name, [input, expected]] of Object.entries(grubWords)) {
  test(`grubArg: ${name}`, () => {
    assert.equal(grubArg(input), expected);
  });
}

test('grubArg refuses newlines (a second command)', () => {
  assert.throws(() => grubArg('a\nreboot'), BootRenderError);
});

test('GRUB file paths: $root-relative paths, (http,host[,port]) devices for URLs', () => {
  assert.equal(grubFilePath('ramdisk//vmlinuz'), '/ramdisk/vmlinuz');
  assert.equal(grubFilePath('http://10.0.0.1/ramdisk/initrd'), "'(http,10.0.0.1)/ramdisk/initrd'");
  assert.equal(grubFilePath('http://10.0.0.1:8081/a%20b'), "'(http,10.0.0.1,8081)/a b'");
  assert.throws(() => grubFilePath('https://10.0.0.1/x'), /no TLS/);
});

test('boot URLs: paths are encoded against the base, absolute http URLs kept', () => {
  assert.equal(resolveBootUrl(`${BASE}/`, '/images/live image.iso'), `${BASE}/images/live%20image.iso`);
  assert.equal(resolveBootUrl(BASE, 'https://mirror.example/x.iso'), 'https://mirror.example/x.iso');
  assert.throws(() => resolveBootUrl(BASE, 'file:///etc/passwd'), BootRenderError);
  assert.equal(scriptUrlFor(`${BASE}/`, '52:54:00:AA:BB:01'), `${BASE}/boot/52-54-00-aa-bb-01.ipxe`);
  assert.equal(hyphenMac('52-54-00-aa-bb-01'), '52-54-00-aa-bb-01');
  assert.throws(() => hyphenMac('52:54:00:aa:bb'), BootRenderError);
});
