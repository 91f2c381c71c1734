// The GRUB ramdisk config's consoles per CPU (found by the arm64 firmware e2e test,
// test/e2e/firmware-arm64.test.ts): with the default consoles, arm64 gets no `console=` (the
// kernel takes the firmware's SPCR/stdout-path console, ttyAMA0 on QEMU virt) while x86 keeps
// `console=tty0 console=ttyS0,115200`; a plan with its own consoles gets them on every CPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RamdiskPlan } from '../../../../bootsvc/ipxe/boot-plan.js';
import { renderGrubConfig } from '../../../../bootsvc/ipxe/grub.js';

const PLAN: RamdiskPlan = {
  kind: 'ramdisk',
  purpose: 'ramdisk',
  kernel: '/ramdisk/vmlinuz',
  initrds: ['/ramdisk/initrd'],
  agentUrl: 'http://10.0.0.1:8081',
  token: 'tok',
};
const CTX = { mac: '52:54:00:aa:bb:02', host: 'arm-0' };

/** The `linux` lines of a config, with the GRUB `if [ "$grub_cpu" … ]` branch each sits in. */
function linuxLines(cfg: string): { branch: string; line: string }[] {
  let branch = 'top';
  const out: { branch: string; line: string }[] = [];
  for (const raw of cfg.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('if [ "$grub_cpu" = "arm64" ]')) branch = 'arm64';
    else if (line === 'else' && branch === 'arm64') branch = 'other';
    else if (line === 'fi' && raw === 'fi') branch = 'top';
    if (line.startsWith('if linux ')) out.push({ branch, line });
  }
  return out;
}

const cases: Record<string, { plan: RamdiskPlan; expected: { branch: string; consoles: string[] }[] }> = {
  'default consoles: arm64 takes the firmware console, x86 gets tty0 and ttyS0': {
    plan: PLAN,
    expected: [{ branch: 'arm64', consoles: [] }, { branch: 'other', consoles: ['console=tty0', 'console=ttyS0,115200'] }],
  },
  'explicit consoles: one command line for every CPU': {
    plan: { ...PLAN, consoles: ['ttyAMA0,115200'] },
    expected: [{ branch: 'top', consoles: ['console=ttyAMA0,115200'] }],
  },
  'explicit empty consoles: one command line without console=': {
    plan: { ...PLAN, consoles: [] },
    expected: [{ branch: 'top', consoles: [] }],
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(`GRUB ramdisk consoles: ${name}`, () => {
    const lines = linuxLines(renderGrubConfig(c.plan, CTX));
    assert.deepEqual(lines.map((l) => ({ branch: l.branch, consoles: l.line.replace(/; then$/, '').split(' ').filter((w) => w.startsWith('console=')) })), c.expected);
    for (const { line } of lines) {
      // Everything but the consoles is the same on every branch.
      assert.match(line, /^if linux \/ramdisk\/vmlinuz BOOTIF=01-52-54-00-aa-bb-02 rackside\.url=http:\/\/10\.0\.0\.1:8081 rackside\.token=tok( console=\S+)*; then$/);
    }
  });
}

test('GRUB ramdisk config: both CPU branches load the same initrds and boot', () => {
  const cfg = renderGrubConfig(PLAN, CTX);
  assert.equal(cfg.match(/^ {4}if initrd \/ramdisk\/initrd; then$/gm)?.length, 2);
  assert.equal(cfg.match(/^ {6}boot$/gm)?.length, 2);
  assert.match(cfg, /configfile "\$prefix\/grub\.cfg"\n$/, 'a failed load still retries through the entry config');
});
