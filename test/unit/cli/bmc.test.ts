// `rackside bmc` against the fake driver (scheme fake://): every subcommand in text and JSON,
// the password sources and the refusal of --password, usage errors before any BMC call, the exit
// codes of BMC failures, and the driver being closed every time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCommandLine } from '../../../agent/cli/args.js';
import { createBmcCommand } from '../../../agent/cli/bmc.js';
import { BmcExitCode, bmcExitCodeOf } from '../../../agent/cli/bmc-output.js';
import { HELP_TEXT } from '../../../agent/cli/help.js';
import { CliError, type CliIo } from '../../../agent/cli/io.js';
import { formatCliError, runCli } from '../../../agent/cli/run.js';
import { BmcErrorCode, DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { BmcError, UnsupportedCapabilityError } from '../../../drivers/errors.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { RedfishTlsError } from '../../../drivers/redfish/http-errors.js';
import type { DriverFactory } from '../../../drivers/registry.js';
import type { FakeBmc } from '../../../drivers/fake/fake-bmc.js';

const ADDRESS = 'fake://node-1';

interface Run {
  code: number;
  out: string;
  err: string;
  sleeps: number[];
}

interface RunOptions {
  env?: Record<string, string>;
  files?: Record<string, string>;
  stdin?: string;
  /** Replaces the fake factory (to script errors the fake has no knob for). */
  factory?: DriverFactory;
}

function makeIo(options: RunOptions, sink: { out: string; err: string; sleeps: number[] }): CliIo {
  let clock = 1_000_000;
  return {
    stdout: (t) => { sink.out += t; },
    stderr: (t) => { sink.err += t; },
    env: { RACKSIDE_BMC_PASSWORD: 'pw', ...options.env },
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    readFile: (path) => {
      const text = options.files?.[path];
      return text === undefined ? Promise.reject(new Error(`ENOENT: no such file or directory, open '${path}'`)) : Promise.resolve(text);
    },
    fetch: globalThis.fetch,
    now: () => clock,
    sleep: (ms) => { sink.sleeps.push(ms); clock += ms; return Promise.resolve(); },
    clientVersion: '0.0.0',
    runAgent: () => Promise.resolve(0),
    createDriverRegistry: () => {
      const registry = new DriverRegistry();
      registerBuiltinDrivers(registry);
      return Promise.resolve(registry);
    },
  };
}

/** Runs `rackside bmc …argv` over `pool`, formatting usage errors as runCli does. */
async function bmc(pool: FakeBmcPool, argv: readonly string[], options: RunOptions = {}): Promise<Run> {
  const sink = { out: '', err: '', sleeps: [] as number[] };
  const io = makeIo(options, sink);
  const command = createBmcCommand({
    pollMs: 500,
    createRegistry: () => {
      const registry = new DriverRegistry();
      registerBuiltinDrivers(registry, { fakePool: pool });
      if (options.factory !== undefined) registry.register('fake', options.factory, { replace: true });
      return registry;
    },
  });
  let code: number;
  try {
    code = await command({ io, args: parseCommandLine(['bmc', ...argv]), client: () => { throw new Error('no API client in bmc'); } });
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    sink.err += formatCliError(err);
    code = err.exitCode;
  }
  return { code, ...sink };
}

function rack(): { pool: FakeBmcPool; node: FakeBmc } {
  const pool = new FakeBmcPool();
  return { pool, node: pool.get('node-1') };
}

const cmd = (...words: string[]): string[] => [ADDRESS, '--username', 'admin', ...words];

test('power status prints the state, -o json an object', async () => {
  const { pool, node } = rack();
  assert.deepEqual(await bmc(pool, cmd('power', 'status')), { code: 0, out: 'off\n', err: '', sleeps: [] });
  node.power = 'on';
  const json = await bmc(pool, cmd('power', 'status', '-o', 'json'));
  assert.deepEqual(JSON.parse(json.out), { address: ADDRESS, power: 'on' });
  assert.equal(node.closeCount, 2, 'the driver is closed after each command');
});

const POWER_WORDS: Record<string, { action: string; final: 'on' | 'off'; from: 'on' | 'off' }> = {
  on: { action: 'on', final: 'on', from: 'off' },
  off: { action: 'off', final: 'off', from: 'on' },
  soft: { action: 'soft-off', final: 'off', from: 'on' },
  'soft-reset': { action: 'soft-reset', final: 'on', from: 'on' },
  cycle: { action: 'cycle', final: 'on', from: 'on' },
  reset: { action: 'reset', final: 'on', from: 'off' },
};
for (const [word, c] of Object.entries(POWER_WORDS)) {
  test(`power ${word} sends setPower(${c.action})`, async () => {
    const { pool, node } = rack();
    node.power = c.from;
    const r = await bmc(pool, cmd('power', word));
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `power ${word} requested\n`);
    assert.deepEqual(node.calls.filter((k) => k.operation === 'setPower').map((k) => k.args), [[c.action]]);
    assert.equal(node.power, c.final);
  });
}

test('power on --wait polls until the BMC reports on', async () => {
  const { pool, node } = rack();
  node.knobs.powerOnDelayCalls = 2;
  const r = await bmc(pool, cmd('power', 'on', '--wait', '-o', 'json'));
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), { address: ADDRESS, action: 'on', requested: true, power: 'on' });
  assert.deepEqual(r.sleeps, [500, 500]);
});

test('power off --wait past --timeout exits 7 and says the last state', async () => {
  const { pool, node } = rack();
  node.power = 'on';
  node.knobs.powerOffDelayCalls = 1000;
  const r = await bmc(pool, cmd('power', 'off', '--wait', '--timeout', '3s'));
  assert.equal(r.code, 7);
  assert.match(r.err, /^error: BMC fake:\/\/node-1: power state is still on after 3000 ms waiting for off\n$/);
  assert.equal(node.closeCount, 1);
});

test('boot sets the override with mode and persistence; boot status reads it', async () => {
  const { pool, node } = rack();
  const r = await bmc(pool, cmd('boot', 'pxe', '--uefi', '--persistent'));
  assert.equal(r.out, 'boot override set: pxe, uefi, persistent\n');
  assert.deepEqual(node.bootOverride, { device: 'pxe', persistent: true, mode: 'uefi' });
  await bmc(pool, cmd('boot', 'cd', '--legacy'));
  assert.deepEqual(node.bootOverride, { device: 'cdrom', persistent: false, mode: 'legacy' });
  await bmc(pool, cmd('boot', 'http'));
  assert.deepEqual(node.bootOverride, { device: 'uefi-http', persistent: false, mode: undefined });
  await bmc(pool, cmd('boot', 'disk'));
  assert.deepEqual(node.bootOverride, { device: 'disk', persistent: false, mode: undefined });
  const status = await bmc(pool, cmd('boot', 'status', '-o', 'json'));
  assert.deepEqual(JSON.parse(status.out), { address: ADDRESS, device: 'disk', persistent: false, mode: null });
  const text = await bmc(pool, cmd('boot', 'status'));
  assert.equal(text.out, 'Device:      disk\nMode:        <none>\nPersistent:  no\n');
});

test('info reports identity, probed capabilities and the scheme answers', async () => {
  const { pool, node } = rack();
  node.knobs.omit = ['raid'];
  const r = await bmc(pool, cmd('info'));
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^Address: +fake:\/\/node-1\n/);
  assert.match(r.out, /\nVendor: +rackside\n/);
  assert.match(r.out, /\nCapabilities \(probed\): +power, bootDevice, virtualMedia, biosSettings, firmware, tasks, eventSubscriptions, secureBoot, inventory, info\n/);
  assert.match(r.out, /\nScheme fake:\n {2}Ironic driver: +fake\n/);
  assert.match(r.out, /\n {2}Boot paths: +pxe, virtual-media, uefi-http\n/);
  const json = JSON.parse((await bmc(pool, cmd('info', '-o', 'json'))).out) as Record<string, unknown>;
  assert.equal(json.scheme, 'fake');
  assert.equal((json.info as { firmwareVersion: string }).firmwareVersion, '1.0.0');
  assert.equal((json.schemeCapabilities as { supportsSecureBoot: boolean }).supportsSecureBoot, true);
  assert.ok(!(json.supported as string[]).includes('raid'));
});

test('inventory prints system fields and NIC/drive tables; JSON has every NIC', async () => {
  const { pool } = rack();
  const r = await bmc(pool, cmd('inventory'));
  assert.match(r.out, /^Manufacturer: +rackside\n/);
  assert.match(r.out, /\nNIC +MAC +SPEED +LINK\nNIC\.1 +52:54:00:[0-9a-f:]{8} +25000 Mb\/s +up\n/);
  assert.match(r.out, /\nDisk\.0 +Fake SSD 960GB +node-1-D0 +960 GB +SSD +SATA\n/);
  const json = JSON.parse((await bmc(pool, cmd('inventory', '-o', 'json'))).out) as { nics: unknown[]; memoryMebibytes: number };
  assert.equal(json.nics.length, 2);
  assert.equal(json.memoryMebibytes, 131072);
});

test('vmedia insert, status and eject', async () => {
  const { pool, node } = rack();
  const url = 'http://10.0.0.1/boot.iso';
  assert.equal((await bmc(pool, cmd('vmedia', 'insert', url))).out, `inserted ${url} (cd)\n`);
  assert.equal(node.media.get('cd'), url);
  const status = await bmc(pool, cmd('vmedia', 'status'));
  assert.equal(status.out, `DEVICE   INSERTED   IMAGE\ncd       yes        ${url}\nusb      no         <none>\n`);
  await bmc(pool, cmd('vmedia', 'eject'));
  assert.equal(node.media.size, 0);
  const json = JSON.parse((await bmc(pool, cmd('vmedia', 'status', '-o', 'json'))).out) as { slots: { inserted: boolean }[] };
  assert.deepEqual(json.slots.map((s) => s.inserted), [false, false]);
});

test('bios get lists values with schema; names filter; unknown names exit 3', async () => {
  const { pool } = rack();
  const all = await bmc(pool, cmd('bios', 'get'));
  assert.match(all.out, /^NAME +VALUE +PENDING +TYPE +ALLOWED\n/);
  assert.match(all.out, /\nBootMode +Uefi +Enumeration +Uefi\|Bios\n/);
  assert.match(all.out, /\nNumaNodesPerSocket +1 +Integer +1\.\.4\n/);
  const one = JSON.parse((await bmc(pool, cmd('bios', 'get', 'BootMode', '-o', 'json'))).out) as { current: Record<string, string> };
  assert.deepEqual(one.current, { BootMode: 'Uefi' });
  const unknown = await bmc(pool, cmd('bios', 'get', 'BootMode', 'Turbo'));
  assert.equal(unknown.code, 3);
  assert.equal(unknown.err, 'error: fake://node-1: unknown BIOS attribute Turbo\n');
});

test('bios set stages the values; a value the schema refuses exits 1; bad pairs exit 2', async () => {
  const { pool, node } = rack();
  const r = await bmc(pool, cmd('bios', 'set', 'NumaNodesPerSocket=2', 'AssetTag=rack 4=u12'));
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'staged NumaNodesPerSocket, AssetTag; they apply at the next reboot\n');
  assert.deepEqual(Object.fromEntries(node.pendingBios), { NumaNodesPerSocket: '2', AssetTag: 'rack 4=u12' });
  const pending = await bmc(pool, cmd('bios', 'get', 'NumaNodesPerSocket'));
  assert.match(pending.out, /\nNumaNodesPerSocket +1 +2 +Integer/);
  const refused = await bmc(pool, cmd('bios', 'set', 'NumaNodesPerSocket=9'));
  assert.equal(refused.code, 1);
  assert.match(refused.err, /NumaNodesPerSocket: 9 is outside 1\.\.4/);
  for (const bad of [['bios', 'set'], ['bios', 'set', 'NoEquals'], ['bios', 'set', '=x'], ['bios', 'set', 'A=1', 'A=2']]) {
    const u = await bmc(pool, cmd(...bad));
    assert.equal(u.code, 2, bad.join(' '));
  }
});

test('firmware list shows every component', async () => {
  const { pool } = rack();
  const r = await bmc(pool, cmd('firmware', 'list'));
  assert.equal(r.out.split('\n')[0], 'ID      COMPONENT   NAME                 VERSION   UPDATEABLE');
  assert.match(r.out, /\nBIOS +bios +Fake UEFI firmware +2\.1\.0 +yes\n/);
  const json = JSON.parse((await bmc(pool, cmd('firmware', 'list', '-o', 'yaml', '-o', 'json'))).out) as { components: { id: string }[] };
  assert.deepEqual(json.components.map((c) => c.id), ['BMC', 'BIOS', 'NIC.1']);
});

test('secureboot on, status and off', async () => {
  const { pool, node } = rack();
  assert.equal((await bmc(pool, cmd('secureboot', 'on'))).out, 'Secure Boot enabled from the next boot\n');
  assert.equal(node.secureBoot, true);
  assert.equal((await bmc(pool, cmd('secureboot', 'status'))).out, 'Enabled:       yes\nCurrent boot:  <none>\n');
  await bmc(pool, cmd('secureboot', 'off'));
  assert.equal(node.secureBoot, false);
  const yaml = await bmc(pool, cmd('secureboot', 'status', '-o', 'yaml'));
  assert.equal(yaml.out, 'address: fake://node-1\nenabled: false\ncurrentBoot: null\n');
});

test('the password comes from --password-file (one trailing newline dropped), stdin or RACKSIDE_BMC_PASSWORD', async () => {
  const { pool, node } = rack();
  node.password = 's3cret ';
  const file = await bmc(pool, cmd('power', 'status', '--password-file', '/run/pw'), { files: { '/run/pw': 's3cret \n' }, env: { RACKSIDE_BMC_PASSWORD: 'wrong' } });
  assert.equal(file.code, 0, file.err);
  const stdin = await bmc(pool, cmd('power', 'status', '--password-file', '-'), { stdin: 's3cret \r\n' });
  assert.equal(stdin.code, 0, stdin.err);
  const env = await bmc(pool, cmd('power', 'status'), { env: { RACKSIDE_BMC_PASSWORD: 's3cret ' } });
  assert.equal(env.code, 0, env.err);
  const username = await bmc(pool, [ADDRESS, 'power', 'status'], { env: { RACKSIDE_BMC_USERNAME: 'admin', RACKSIDE_BMC_PASSWORD: 's3cret ' } });
  assert.equal(username.code, 0, username.err);
});

test('credential problems are usage errors; a wrong password exits 8 without echoing it', async () => {
  const { pool, node } = rack();
  node.password = 'right';
  const missingFile = await bmc(pool, cmd('power', 'status', '--password-file', '/nope'));
  assert.equal(missingFile.code, 2);
  assert.match(missingFile.err, /^error: cannot read --password-file \/nope: ENOENT/);
  const sink = { out: '', err: '', sleeps: [] as number[] };
  const io = { ...makeIo({}, sink), env: {} };
  await assert.rejects(createBmcCommand()({ io, args: parseCommandLine(['bmc', ...cmd('power', 'status')]), client: () => { throw new Error('unused'); } }),
    (err: unknown) => err instanceof CliError && err.exitCode === 2 && /missing password/.test(err.message));
  const noUser = await bmc(pool, [ADDRESS, 'power', 'status']);
  assert.equal(noUser.code, 2);
  assert.match(noUser.err, /missing --username/);
  const wrong = await bmc(pool, cmd('power', 'status'), { env: { RACKSIDE_BMC_PASSWORD: 'hunter2' } });
  assert.equal(wrong.code, 8);
  assert.equal(wrong.err, 'error: BMC fake://node-1 rejected the credentials\n');
  assert.ok(node.calls.every((c) => c.operation === 'getPowerState'));
});

test('--password is refused with the reason, and the value is not echoed', async () => {
  const { pool, node } = rack();
  const r = await bmc(pool, cmd('power', 'on', '--password', 'hunter2'));
  assert.equal(r.code, 2);
  assert.match(r.err, /--password is refused: .*\/proc\/PID\/cmdline.*shell history; use --password-file FILE .*RACKSIDE_BMC_PASSWORD/);
  assert.ok(!r.err.includes('hunter2'));
  assert.equal(node.calls.length, 0);
});

const USAGE_ERRORS: Record<string, { argv: string[]; message: RegExp }> = {
  'no address': { argv: [], message: /missing ADDRESS or COMMAND\nusage: rackside bmc ADDRESS/ },
  'no command': { argv: [ADDRESS, '--username', 'u'], message: /missing ADDRESS or COMMAND/ },
  'unknown command': { argv: cmd('reboot'), message: /unknown bmc command "reboot"\nusage:/ },
  'bad address': { argv: ['redfsh://x', 'power', 'status'], message: /unknown BMC type 'redfsh'/ },
  'credentials in the address': { argv: ['redfish://root:calvin@10.0.0.1', 'power', 'status'], message: /contains credentials/ },
  'unknown power word': { argv: cmd('power', 'of'), message: /power needs status\|on\|off.*got "of"/ },
  'extra argument': { argv: cmd('power', 'status', 'now'), message: /unexpected argument "now" after "power status"/ },
  '--timeout without --wait': { argv: cmd('power', 'on', '--timeout', '5s'), message: /--timeout applies with --wait only/ },
  'bad --timeout': { argv: cmd('power', 'on', '--wait', '--timeout', 'soon'), message: /--timeout must be a duration/ },
  '--wait on status': { argv: cmd('power', 'status', '--wait'), message: /--wait does not apply to "rackside bmc ADDRESS power status"/ },
  '--uefi on power': { argv: cmd('power', 'on', '--uefi'), message: /--uefi does not apply/ },
  '--uefi and --legacy': { argv: cmd('boot', 'pxe', '--uefi', '--legacy'), message: /exclude each other/ },
  'http boot in legacy mode': { argv: cmd('boot', 'http', '--legacy'), message: /needs UEFI mode/ },
  'unknown boot device': { argv: cmd('boot', 'usb'), message: /boot needs pxe\|disk\|cd\|http\|bios\|status, got "usb"/ },
  'vmedia without URL': { argv: cmd('vmedia', 'insert'), message: /needs the image URL/ },
  'vmedia with a file path': { argv: cmd('vmedia', 'insert', '/srv/boot.iso'), message: /http:\/\/ or https:\/\/ URL/ },
  'firmware without list': { argv: cmd('firmware'), message: /firmware needs list/ },
  'secureboot word': { argv: cmd('secureboot', 'yes'), message: /secureboot needs on\|off\|status/ },
  '-o table': { argv: cmd('info', '-o', 'table'), message: /-o must be json or yaml/ },
};
for (const [name, c] of Object.entries(USAGE_ERRORS)) {
  test(`usage error before any BMC call: ${name}`, async () => {
    const { pool, node } = rack();
    const r = await bmc(pool, c.argv, { env: {} });
    assert.equal(r.code, 2);
    assert.match(r.err, c.message);
    assert.equal(node.calls.length, 0);
    assert.equal(r.out, '');
  });
}

test('BMC failures map to documented exit codes and the driver is still closed', async () => {
  const cases: [string, (n: FakeBmc) => void, number, RegExp][] = [
    ['unreachable', (n) => { n.knobs.unreachable = true; }, 6, /is unreachable/],
    ['auth', (n) => { n.knobs.authFails = true; }, 8, /rejected the credentials/],
    ['busy', (n) => { n.knobs.busyCalls = 5; }, 11, /is busy/],
    ['power-on failure', (n) => { n.knobs.failPowerOn = true; }, 1, /power on failed/],
  ];
  for (const [name, setup, code, message] of cases) {
    const { pool, node } = rack();
    setup(node);
    const r = await bmc(pool, cmd('power', 'on'));
    assert.equal(r.code, code, name);
    assert.match(r.err, message, name);
    assert.equal(node.closeCount, 1, name);
  }
});

test('a capability the driver lacks exits 9 naming the capability and the scheme, without a BMC call', async () => {
  const { pool, node } = rack();
  node.knobs.omit = ['virtualMedia', 'secureBoot'];
  const r = await bmc(pool, cmd('vmedia', 'status'));
  assert.equal(r.code, 9);
  assert.equal(r.err, 'error: fake://node-1: virtual media (capability virtualMedia) is not supported for scheme fake (fake driver); '
    + 'it supports: power, bootDevice, biosSettings, firmware, tasks, raid, eventSubscriptions, inventory, info\n');
  assert.equal(node.calls.length, 0);
  assert.equal((await bmc(pool, cmd('secureboot', 'status'))).code, 9);
});

test('an action the BMC refuses as unsupported exits 9 with the scheme added', async () => {
  const factory: DriverFactory = (address) => ({
    power: {
      getPowerState: () => Promise.resolve('on'),
      setPower: (action) => Promise.reject(new UnsupportedCapabilityError('power', `setPower(${action})`, { address: address.raw, driver: 'fake' })),
    },
  });
  const r = await bmc(new FakeBmcPool(), cmd('power', 'soft-reset'), { factory });
  assert.equal(r.code, 9);
  assert.equal(r.err, 'error: BMC fake://node-1 (fake driver) does not support power.setPower(soft-reset) (scheme fake)\n');
});

test('a TLS verification failure exits 10 and names the host', async () => {
  const factory: DriverFactory = (address) => ({
    power: {
      getPowerState: () => Promise.reject(new RedfishTlsError(address.raw, '10.0.0.9:443', 'DEPTH_ZERO_SELF_SIGNED_CERT', undefined)),
      setPower: () => Promise.resolve(),
    },
  });
  const r = await bmc(new FakeBmcPool(), cmd('power', 'status'), { factory });
  assert.equal(r.code, 10);
  assert.match(r.err, /the TLS certificate of 10\.0\.0\.9:443 was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT\).*--insecure/);
});

const EXIT_CODES: Record<string, [unknown, number]> = {
  unreachable: [new BmcError(BmcErrorCode.unreachable, 'x'), 6],
  timeout: [new BmcError(BmcErrorCode.timeout, 'x'), 7],
  auth: [new BmcError(BmcErrorCode.auth, 'x'), 8],
  unsupported: [new BmcError(BmcErrorCode.unsupported, 'x'), 9],
  tls: [new RedfishTlsError('a', 'h', 'CERT_HAS_EXPIRED', undefined), 10],
  busy: [new BmcError(BmcErrorCode.busy, 'x'), 11],
  protocol: [new BmcError(BmcErrorCode.protocol, 'x'), 1],
  noDriver: [new BmcError(BmcErrorCode.noDriver, 'x'), 1],
  plain: [new Error('x'), 1],
  'not an object': ['boom', 1],
};
for (const [name, [err, code]] of Object.entries(EXIT_CODES)) {
  test(`exit code of a ${name} failure is ${code}`, () => {
    assert.equal(bmcExitCodeOf(err), code);
  });
}

test('the BMC exit codes extend the CLI ones without overlap', () => {
  const values = Object.values(BmcExitCode);
  assert.equal(new Set(values).size, values.length);
  assert.deepEqual([BmcExitCode.auth, BmcExitCode.unsupported, BmcExitCode.tls, BmcExitCode.busy], [8, 9, 10, 11]);
});

test('runCli dispatches bmc (the CLI\'s registry, fake scheme) and --help documents it', async () => {
  const sink = { out: '', err: '', sleeps: [] as number[] };
  const code = await runCli(['bmc', 'fake://rack-9', '--username', 'u', '--insecure', 'power', 'status'], makeIo({}, sink));
  assert.equal(code, 0, sink.err);
  assert.equal(sink.out, 'off\n');
  const refused = await runCli(['get', 'hosts', '--insecure'], makeIo({}, sink));
  assert.equal(refused, 2);
  assert.match(HELP_TEXT, /rackside bmc ADDRESS --username USER \[--password-file FILE\]/);
  for (const line of [/\n {2}8 {2}the BMC rejected/, /\n {2}9 {2}the capability/, /\n {2}10 the BMC's TLS certificate/, /\n {2}11 the BMC is busy/]) {
    assert.match(HELP_TEXT, line);
  }
});
