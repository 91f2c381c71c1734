import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ModuleIndexError,
  moduleNameOf,
  parseModuleTree,
  renderModulesAlias,
  renderModulesDep,
  resolveModuleLoadOrder,
} from '../../../images/modules.js';
import { fixtureModulesAlias, fixtureModulesBuiltin, fixtureModulesDep, fixtureModulesSoftdep } from './fixtures.js';

function tree() {
  return parseModuleTree({
    modulesDep: fixtureModulesDep,
    modulesAlias: fixtureModulesAlias,
    modulesSoftdep: fixtureModulesSoftdep,
    modulesBuiltin: fixtureModulesBuiltin,
  });
}

function assertBefore(order: string[], first: string, then: string): void {
  assert.ok(order.indexOf(first) >= 0 && order.indexOf(first) < order.indexOf(then), `${first} must load before ${then}: ${order.join(' ')}`);
}

const names: Record<string, [string, string]> = {
  'plain path': ['kernel/drivers/net/virtio_net.ko', 'virtio_net'],
  'dash normalized': ['kernel/lib/crc-t10dif.ko', 'crc_t10dif'],
  'xz module': ['kernel/x/foo-bar.ko.xz', 'foo_bar'],
  'zst module': ['foo.ko.zst', 'foo'],
  'bare name': ['t10-pi', 't10_pi'],
};
for (const [name, [input, want]] of Object.entries(names)) {
  test(`moduleNameOf: ${name}`, () => {
    assert.equal(moduleNameOf(input), want);
  });
}

test('virtio_pci and virtio_net load in dependency order (the order docs/test-peers.md gives)', () => {
  const r = resolveModuleLoadOrder(tree(), ['virtio_pci', 'virtio_net']);
  const order = r.order.map((m) => m.name);
  assert.deepEqual(order, ['virtio_ring', 'virtio', 'virtio_pci_modern_dev', 'virtio_pci_legacy_dev', 'virtio_pci', 'failover', 'net_failover', 'virtio_net']);
  assert.deepEqual(r.missing, []);
});

test('sd_mod pulls crc-t10dif with its crct10dif softdep (resolved through modules.alias) first', () => {
  const order = resolveModuleLoadOrder(tree(), ['sd_mod']).order.map((m) => m.name);
  assertBefore(order, 'crct10dif_common', 'crct10dif_generic');
  assertBefore(order, 'crct10dif_generic', 'crc_t10dif');
  assertBefore(order, 'crc_t10dif', 't10_pi');
  assertBefore(order, 'scsi_common', 'scsi_mod');
  assertBefore(order, 't10_pi', 'sd_mod');
  assertBefore(order, 'scsi_mod', 'sd_mod');
  assert.equal(order.at(-1), 'sd_mod');
  assert.equal(new Set(order).size, order.length, 'each module once');
});

test('missing and built-in requests are reported, not fatal; unknown softdeps are ignored', () => {
  const r = resolveModuleLoadOrder(tree(), ['e1000', 'nonexistent', 'ext4', 'loop', 'virtio_net']);
  assert.deepEqual(r.missing, ['nonexistent']);
  assert.deepEqual(r.builtin, ['ext4', 'loop']);
  assert.ok(r.order.some((m) => m.path === 'kernel/drivers/net/ethernet/intel/e1000/e1000.ko'));
  assert.ok(!r.order.some((m) => m.name === 'big'));
});

test('a request by alias resolves to its module; the order is stable', () => {
  const a = resolveModuleLoadOrder(tree(), ['crypto-crct10dif', 'virtio_net']);
  const b = resolveModuleLoadOrder(tree(), ['crypto-crct10dif', 'virtio_net']);
  assert.equal(a.order[1]?.name, 'crct10dif_generic');
  assert.deepEqual(a, b);
});

test('a dependency cycle in a malformed modules.dep terminates with each module once', () => {
  const t = parseModuleTree({ modulesDep: 'a.ko: b.ko\nb.ko: a.ko\n' });
  const order = resolveModuleLoadOrder(t, ['a']).order.map((m) => m.name);
  assert.deepEqual(order.sort(), ['a', 'b']);
});

test('renderModulesDep and renderModulesAlias keep only the included modules', () => {
  const t = tree();
  const r = resolveModuleLoadOrder(t, ['virtio_net']);
  const dep = renderModulesDep(t, r.order);
  assert.equal(dep.split('\n').filter(Boolean).length, 5);
  assert.match(dep, /^kernel\/drivers\/net\/virtio_net\.ko: kernel\/drivers\/net\/net_failover\.ko kernel\/net\/core\/failover\.ko kernel\/drivers\/virtio\/virtio\.ko kernel\/drivers\/virtio\/virtio_ring\.ko$/m);
  assert.match(dep, /^kernel\/net\/core\/failover\.ko:$/m);
  assert.doesNotMatch(dep, /e1000|sd_mod/);
  assert.equal(renderModulesAlias(t, r.order), 'alias virtio:d00000001v* virtio_net\n');
  assert.throws(() => renderModulesDep(t, [{ name: 'virtio_net', path: 'kernel/drivers/net/virtio_net.ko' }]), ModuleIndexError);
});

const malformed: Record<string, () => unknown> = {
  'modules.dep line without colon': () => parseModuleTree({ modulesDep: 'kernel/a.ko kernel/b.ko\n' }),
  'dependency without its own line': () => parseModuleTree({ modulesDep: 'kernel/a.ko: kernel/b.ko\n' }),
  'bad alias line': () => parseModuleTree({ modulesDep: '', modulesAlias: 'alias onlyone\n' }),
};
for (const [name, fn] of Object.entries(malformed)) {
  test(`parseModuleTree rejects ${name}`, () => {
    assert.throws(fn, ModuleIndexError);
  });
}
