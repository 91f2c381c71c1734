/**
 * Applying and reading the firmware kinds: manifest decoding (a bad field is a 400 naming it),
 * create / unchanged / configured with the generation bumped and status kept, the host's
 * namespace, the check against the BIOS schema once the host reported it
 * (`spec.settings.<name>`), `GET /api/v1/hosts/{name}/firmware` through the real management
 * app, its OpenAPI entry, and what `describe host` prints.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiErrorCode } from '../../../agent/errors.js';
import type { HostFirmware } from '../../../agent/host/firmware-types.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { decodeManifest } from '../../../agent/host/validation.js';
import { renderFirmwareSection, resourceOfKind } from '../../../agent/cli/render-firmware.js';
import { renderHostsTable } from '../../../agent/cli/render.js';
import type { CliIo } from '../../../agent/cli/io.js';
import { runCli } from '../../../agent/cli/run.js';
import { categoryOf } from '../../../agent/web/ui/host-model.js';
import { buildOpenApiDocument } from '../../../agent/web/openapi.js';
import { sampleHost, startFakeApi } from '../../helpers/fake-backend.js';
import { hostManifests, newHarness } from '../../helpers/host-harness.js';
import { hfcManifest, hfsManifest, hupManifest, storedHfs } from './firmware-helpers.js';

function rejectsWith(code: string, field: string, message?: RegExp) {
  return (error: unknown): boolean => {
    const e = error as { code?: string; field?: string; message?: string };
    assert.equal(e.code, code);
    assert.equal(e.field, field);
    if (message !== undefined) assert.match(e.message ?? '', message);
    return true;
  };
}

const BAD_MANIFESTS: Record<string, { doc: Record<string, unknown>; field: string; message: RegExp }> = {
  'a setting that is neither string nor integer': { doc: hfsManifest('h', { Foo: 1.5 }), field: 'spec.settings.Foo', message: /string or an integer, got 1\.5/ },
  'a boolean setting': { doc: { ...hfsManifest('h', {}), spec: { settings: { Foo: true } } }, field: 'spec.settings.Foo', message: /got boolean/ },
  'an odd setting name is quoted': { doc: { ...hfsManifest('h', {}), spec: { settings: { 'a.b': [] } } }, field: 'spec.settings["a.b"]', message: /got array/ },
  'an unknown spec field': { doc: { ...hfsManifest('h', {}), spec: { settings: {}, bogus: 1 } }, field: 'spec.bogus', message: /unknown field/ },
  'settings not a map': { doc: { ...hfsManifest('h', {}), spec: { settings: 'x' } }, field: 'spec.settings', message: /must be an object/ },
  'a wrong apiVersion': { doc: { ...hfsManifest('h', {}), apiVersion: 'metal3.io/v1beta1' }, field: 'apiVersion', message: /metal3\.io\/v1alpha1/ },
  'an update URL that is not http(s)': { doc: hfcManifest('h', [{ component: 'bios', url: 'ftp://fw.example/x.bin' }]), field: 'spec.updates[0].url', message: /scheme must be http or https/ },
  'an update URL that is no URL': { doc: hfcManifest('h', [{ component: 'bmc', url: 'bmc.bin' }]), field: 'spec.updates[0].url', message: /not an absolute URL/ },
  'an update without component': { doc: { ...hfcManifest('h', []), spec: { updates: [{ url: 'http://fw/x' }] } }, field: 'spec.updates[0].component', message: /required/ },
  'an update policy outside the enum': { doc: hupManifest('h', { firmwareSettings: 'always' }), field: 'spec.firmwareSettings', message: /"onPreparing", "onReboot"/ },
  'a bad name': { doc: { ...hupManifest('h', {}), metadata: { name: 'Not_A_Name' } }, field: 'metadata.name', message: /not a valid name/ },
};

for (const [name, c] of Object.entries(BAD_MANIFESTS)) {
  test(`firmware manifest refused with the field named: ${name}`, () => {
    assert.throws(() => decodeManifest(c.doc), rejectsWith(ApiErrorCode.invalid, c.field, c.message));
  });
}

test('apply creates, reports unchanged, configures with generation + 1 and keeps status; prefixes paths in multi-document applies', async () => {
  const bench = newHarness();
  await bench.service.apply(hostManifests('ap-0'));
  await bench.tryReconcile('ap-0', (h) => h.status.provisioning.state === 'available');
  const created = await bench.service.apply([hfsManifest('ap-0', {}), hupManifest('ap-0', { firmwareSettings: 'onReboot' })]);
  // Registration created the HFS with an empty spec: the same empty spec is unchanged.
  assert.deepEqual(created.map((o) => [o.kind, o.action]), [['HostFirmwareSettings', 'unchanged'], ['HostUpdatePolicy', 'created']]);
  const before = await storedHfs(bench, 'ap-0');
  const changed = await bench.service.apply([hfsManifest('ap-0', { LogicalProc: 'Disabled' })]);
  assert.deepEqual(changed.map((o) => o.action), ['configured']);
  const after = await storedHfs(bench, 'ap-0');
  assert.equal(after.metadata.generation, before.metadata.generation + 1);
  assert.deepEqual(after.status.settings, before.status.settings, 'status is the agent\'s, not the manifest\'s');
  assert.deepEqual(after.spec.settings, { LogicalProc: 'Disabled' });
  await assert.rejects(
    bench.service.apply([...hostManifests('ap-1'), hfsManifest('ap-1', { Foo: 2.5 })]),
    rejectsWith(ApiErrorCode.invalid, 'items[2].spec.settings.Foo'),
  );
  assert.equal(await bench.store.getHost('ap-1'), undefined, 'nothing of a refused apply is written');
});

test('a firmware object must live in its host\'s namespace; a stale resourceVersion is a 409', async () => {
  const bench = newHarness();
  await bench.service.apply(hostManifests('ns-0'));
  const elsewhere = { ...hupManifest('ns-0', {}), metadata: { name: 'ns-0', namespace: 'other' } };
  await assert.rejects(bench.service.apply([elsewhere]), rejectsWith(ApiErrorCode.conflict, 'metadata.namespace', /namespace "metal3"/));
  await bench.service.apply([hupManifest('ns-0', {})]);
  const stale = { ...hupManifest('ns-0', { firmwareUpdates: 'onReboot' }), metadata: { name: 'ns-0', namespace: 'metal3', resourceVersion: '1' } };
  await assert.rejects(bench.service.apply([stale]), rejectsWith(ApiErrorCode.conflict, 'metadata.resourceVersion'));
});

const REFUSED: Record<string, { settings: Record<string, string | number>; field: string; message: RegExp }> = {
  'unknown attribute': { settings: { Foo: 'x' }, field: 'spec.settings.Foo', message: /not in the Status field/ },
  'read-only attribute': { settings: { AssetTag: 'a' }, field: 'spec.settings.AssetTag', message: /ReadOnly/ },
  'out of range': { settings: { NetworkBootRetryCount: 21 }, field: 'spec.settings.NetworkBootRetryCount', message: /above maximum value 20/ },
  'bad enumeration value': { settings: { BootMode: 'Legacy' }, field: 'spec.settings.BootMode', message: /unknown enumeration value - Legacy/ },
  'the first bad one by name': { settings: { ProcVirtualization: 'On', BootMode: 'x' }, field: 'spec.settings.BootMode', message: /BootMode/ },
};

for (const [name, c] of Object.entries(REFUSED)) {
  test(`once the host reported its BIOS schema, a setting it would refuse is a 400: ${name}`, async () => {
    const bench = newHarness();
    await bench.service.apply(hostManifests('sc-0'));
    await bench.tryReconcile('sc-0', (h) => h.status.provisioning.state === 'available');
    await assert.rejects(bench.service.apply([hfsManifest('sc-0', c.settings)]), rejectsWith(ApiErrorCode.invalid, c.field, c.message));
    assert.deepEqual((await storedHfs(bench, 'sc-0')).spec.settings, {}, 'not stored');
    const ok = await bench.service.apply([hfsManifest('sc-0', { ProcVirtualization: 'Disabled' })]);
    assert.deepEqual(ok.map((o) => o.action), ['configured']);
  });
}

test('GET /api/v1/hosts/{name}/firmware answers the firmware objects; 404 without the host; documented', async (t) => {
  const bench = newHarness();
  await bench.service.apply([...hostManifests('api-0'), hupManifest('api-0', { firmwareSettings: 'onReboot' }), hfsManifest('api-0', { LogicalProc: 'Disabled' })]);
  await bench.tryReconcile('api-0', (h) => h.status.provisioning.state === 'available');
  const api = await startFakeApi(bench.service);
  t.after(() => api.close());
  const res = await fetch(`${api.baseUrl}/api/v1/hosts/api-0/firmware`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as HostFirmware;
  assert.equal(body.hostFirmwareSettings?.kind, 'HostFirmwareSettings');
  assert.equal(body.hostFirmwareSettings.status.settings.LogicalProc, 'Disabled');
  assert.equal(body.hostFirmwareComponents?.status.components?.length, 2);
  assert.equal(body.hostUpdatePolicy?.spec.firmwareSettings, 'onReboot');
  assert.equal(body.firmwareSchema?.metadata.name, body.hostFirmwareSettings.status.schema?.name);
  const missing = await fetch(`${api.baseUrl}/api/v1/hosts/nope/firmware`);
  assert.equal(missing.status, 404);
  const applied = await fetch(`${api.baseUrl}/api/v1/apply`, {
    method: 'POST', headers: { 'content-type': 'application/yaml' },
    body: 'apiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata: {name: api-0, namespace: metal3}\nspec:\n  settings:\n    Foo: bar\n',
  });
  assert.equal(applied.status, 400);
  assert.equal(((await applied.json()) as { error: { field: string } }).error.field, 'spec.settings.Foo');
  const doc = buildOpenApiDocument('t') as { paths: Record<string, { get?: { responses?: Record<string, unknown> } }>; components: { schemas: Record<string, unknown> } };
  assert.ok(doc.paths['/api/v1/hosts/{name}/firmware']?.get?.responses?.['200']);
  for (const schema of ['HostFirmware', 'HostFirmwareSettings', 'HostFirmwareComponents', 'HostUpdatePolicy', 'FirmwareSchema']) assert.ok(doc.components.schemas[schema], schema);
});

test('describe host shows update policy, schema, wanted vs current settings and components', async () => {
  const bench = newHarness();
  await bench.service.apply([...hostManifests('d-0'), hfcManifest('d-0', [{ component: 'bmc', url: 'http://fw.example/bmc.bin' }]), hfsManifest('d-0', { ProcVirtualization: 'Maybe' })]);
  await bench.tryReconcile('d-0', (h: BareMetalHost) => h.status.provisioning.state === 'available');
  const text = renderFirmwareSection(await bench.service.getHostFirmware('d-0'));
  assert.match(text, /^Firmware:\n/);
  assert.match(text, /Update Policy: +<none> \(no servicing\)/);
  assert.match(text, /BIOS Schema: +schema-[0-9a-f]{8} \(7 attributes\)/);
  assert.match(text, /Settings: +ChangeDetected=True, Valid=False \(ConfigurationError: Invalid BIOS setting: Setting ProcVirtualization is invalid, unknown enumeration value - Maybe\)/);
  assert.match(text, /ProcVirtualization +Maybe +Enabled/);
  assert.match(text, /bmc +6\.10\.30\.00 +6\.10\.30\.00 +http:\/\/fw\.example\/bmc\.bin \(handed over\)/);
  assert.equal(renderFirmwareSection({ hostFirmwareSettings: null, hostFirmwareComponents: null, hostUpdatePolicy: null, firmwareSchema: null }), '');
  assert.equal(resourceOfKind('HostUpdatePolicy'), 'hostupdatepolicy.metal3.io');
  assert.equal(resourceOfKind('Secret'), 'secret');
});

test('a host being serviced shows as such in `get hosts` and as busy on the status page', () => {
  const host = sampleHost('s-0', { status: { operationalStatus: 'servicing', provisioning: { state: 'provisioned', ID: 'x', image: { url: 'http://i/os.qcow2' } } } });
  assert.match(renderHostsTable([host], Date.parse('2026-01-01T00:00:00Z'), false), /s-0 +provisioned \(servicing\)/);
  assert.match(renderHostsTable([host], Date.parse('2026-01-01T00:00:00Z'), true), /s-0 +servicing +provisioned /);
  assert.equal(categoryOf(host), 'busy');
  assert.equal(categoryOf({ ...host, status: { ...host.status, operationalStatus: 'OK' } }), 'done');
});

test('rackside apply -f and describe host over the real API: firmware kinds named, Firmware section shown', async (t) => {
  const bench = newHarness();
  const api = await startFakeApi(bench.service);
  t.after(() => api.close());
  let out = '';
  let err = '';
  const files: Record<string, string> = {
    'fw.yaml': [
      'apiVersion: metal3.io/v1alpha1', 'kind: HostFirmwareSettings', 'metadata: {name: cli-0, namespace: metal3}', 'spec: {settings: {LogicalProc: Disabled}}', '---',
      'apiVersion: metal3.io/v1alpha1', 'kind: HostUpdatePolicy', 'metadata: {name: cli-0, namespace: metal3}', 'spec: {firmwareSettings: onReboot}', '',
    ].join('\n'),
  };
  const io: CliIo = {
    stdout: (text) => { out += text; },
    stderr: (text) => { err += text; },
    env: { RACKSIDE_SERVER: api.baseUrl },
    readStdin: () => Promise.resolve(''),
    readFile: (path) => Promise.resolve(files[path] ?? ''),
    fetch: globalThis.fetch,
    now: () => Date.parse('2026-01-01T00:00:00Z'),
    sleep: () => Promise.resolve(),
    clientVersion: 't',
    runAgent: () => Promise.resolve(0),
  };
  await bench.service.apply(hostManifests('cli-0'));
  assert.equal(await runCli(['apply', '-f', 'fw.yaml'], io), 0, err);
  assert.match(out, /hostfirmwaresettings\.metal3\.io\/cli-0 created\nhostupdatepolicy\.metal3\.io\/cli-0 created\n/);
  await bench.tryReconcile('cli-0', (h) => h.status.provisioning.state === 'available');
  out = '';
  assert.equal(await runCli(['describe', 'host', 'cli-0'], io), 0, err);
  assert.match(out, /\nFirmware:\n {2}Update Policy: +firmwareSettings=onReboot, firmwareUpdates=<none>\n/);
  assert.match(out, /LogicalProc +Disabled +Disabled/);
});
