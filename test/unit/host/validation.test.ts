import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeHost, decodeManifest, emptyHostStatus } from '../../../agent/host/validation.js';
import { ApiErrorCode, ValidationError } from '../../../agent/errors.js';
import { baseHost, DEV_ENV_MANIFEST, KUBECTL_GET_OUTPUT, parseManifests, PRODUCTION_MANIFEST, VARIANT_HOSTS } from './validation-manifests.js';

type Json = Record<string, unknown>;

/** Asserts that `fn` throws a 400 ValidationError at exactly `field`, with a message matching `message`. */
function assertInvalid(fn: () => unknown, field: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ValidationError, `expected ValidationError, got ${String(err)}`);
    assert.equal(err.field, field, `wrong field; message was: ${err.message}`);
    assert.equal(err.status, 400);
    assert.equal(err.code, ApiErrorCode.invalid);
    if (field !== '') assert.ok(err.message.startsWith(`${field}: `), err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

function spec(h: Json): Json {
  return h.spec as Json;
}

test('every document of the realistic manifests decodes', () => {
  const docs = [DEV_ENV_MANIFEST, PRODUCTION_MANIFEST, VARIANT_HOSTS, KUBECTL_GET_OUTPUT].flatMap(parseManifests);
  assert.equal(docs.length, 14);
  const decoded = docs.map((d, i) => decodeManifest(d, `items[${i}].`));
  assert.deepEqual(decoded.map((m) => m.kind === 'BareMetalHost' ? m.host.metadata.name : m.kind === 'Secret' ? `secret/${m.secret.metadata.name}` : m.kind === 'BMCEventSubscription' ? `${m.kind}/${m.subscription.metadata.name}` : `${m.kind}/${m.firmware.metadata.name}`), [
    'secret/node-0-bmc-secret', 'node-0', 'secret/node-1-bmc-secret', 'node-1',
    'secret/worker-3-user-data', 'worker-3',
    'swraid-0', 'live-iso-0', 'oci-0', 'coreos-0', 'unmanaged-0', 'preinspected-0', 'libvirt-0',
    'node-0',
  ]);
});

test('metal3-dev-env host decodes to the expected resource with defaults', () => {
  const [, doc] = parseManifests(DEV_ENV_MANIFEST);
  const host = decodeHost(doc);
  assert.deepEqual(host, {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name: 'node-0', namespace: 'metal3', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: {
      online: true,
      bootMACAddress: '00:5c:52:31:3a:9c',
      bootMode: 'legacy',
      automatedCleaningMode: 'metadata',
      bmc: { address: 'ipmi://192.168.111.1:6230', credentialsName: 'node-0-bmc-secret' },
    },
    status: emptyHostStatus(),
  });
});

test('production host keeps every field it set', () => {
  const docs = parseManifests(PRODUCTION_MANIFEST);
  const host = decodeHost(docs[1]);
  assert.equal(host.spec.bootMode, 'UEFISecureBoot');
  assert.deepEqual(host.spec.rootDeviceHints, { model: 'PERC H755', minSizeGigabytes: 200, rotational: false });
  assert.deepEqual(host.spec.raid?.hardwareRAIDVolumes?.map((v) => [v.name, v.level, v.physicalDisks?.length ?? 0]), [['os', '1', 2], ['data', '5', 0]]);
  assert.deepEqual(host.spec.userData, { name: 'worker-3-user-data', namespace: 'edge-rack7' });
  assert.deepEqual(host.spec.networkData, { name: 'worker-3-network-data' });
  assert.deepEqual(host.spec.taints, [{ key: 'node-role.kubernetes.io/storage', effect: 'NoSchedule' }]);
  assert.equal(host.spec.consumerRef?.kind, 'Metal3Machine');
  assert.equal(host.metadata.annotations?.['reboot.metal3.io/remediation'], '{"mode":"hard"}');
});

test('kubectl get output: status and server-owned metadata are accepted and dropped', () => {
  const [doc] = parseManifests(KUBECTL_GET_OUTPUT);
  const host = decodeHost(doc);
  assert.deepEqual(host.status, emptyHostStatus());
  assert.deepEqual([host.metadata.uid, host.metadata.resourceVersion, host.metadata.generation, host.metadata.creationTimestamp, host.metadata.finalizers], ['', '', 0, '', undefined]);
});

test('a software RAID root volume and JSON null fields decode', () => {
  const h = baseHost();
  spec(h).raid = { hardwareRAIDVolumes: null, softwareRAIDVolumes: [{ level: '1', rootVolume: true }] };
  spec(h).rootDeviceHints = null;
  const host = decodeHost(h);
  assert.deepEqual(host.spec.raid, { softwareRAIDVolumes: [{ level: '1', rootVolume: true }] });
  assert.equal(host.spec.rootDeviceHints, undefined);
});

test('the namespace defaults to "default"', () => {
  const h = baseHost();
  (h.metadata as Json).namespace = undefined;
  delete (h.metadata as Json).namespace;
  assert.equal(decodeHost(h).metadata.namespace, 'default');
});

/** Each case mutates a valid host and names the exact field path of the expected error. */
const invalid: Record<string, { mutate: (h: Json) => void; field: string; message?: RegExp; prefix?: string }> = {
  'wrong apiVersion': { mutate: (h) => { h.apiVersion = 'metal3.io/v1beta1'; }, field: 'apiVersion', message: /must be "metal3.io\/v1alpha1"/ },
  'wrong kind': { mutate: (h) => { h.kind = 'Host'; }, field: 'kind' },
  'unknown top-level field': { mutate: (h) => { h.specs = {}; }, field: 'specs', message: /unknown field/ },
  'missing metadata': { mutate: (h) => { delete h.metadata; }, field: 'metadata', message: /required/ },
  'missing spec': { mutate: (h) => { delete h.spec; }, field: 'spec', message: /required/ },
  'status not an object': { mutate: (h) => { h.status = 'ok'; }, field: 'status' },
  'missing name': { mutate: (h) => { delete (h.metadata as Json).name; }, field: 'metadata.name' },
  'uppercase name': { mutate: (h) => { (h.metadata as Json).name = 'Node-0'; }, field: 'metadata.name', message: /RFC 1123/ },
  'underscore in name': { mutate: (h) => { (h.metadata as Json).name = 'node_0'; }, field: 'metadata.name' },
  'name too long': { mutate: (h) => { (h.metadata as Json).name = 'a'.repeat(254); }, field: 'metadata.name' },
  'name is a UUID': { mutate: (h) => { (h.metadata as Json).name = '0d2f8c41-77a5-4b6a-9d0e-2f4c1b8a9e11'; }, field: 'metadata.name', message: /UUID/ },
  'namespace with a dot': { mutate: (h) => { (h.metadata as Json).namespace = 'edge.rack7'; }, field: 'metadata.namespace', message: /RFC 1123 label/ },
  'unknown metadata field': { mutate: (h) => { (h.metadata as Json).generateName = 'node-'; }, field: 'metadata.generateName', message: /unknown field/ },
  'label value not a string': { mutate: (h) => { (h.metadata as Json).labels = { rack: 7 }; }, field: 'metadata.labels["rack"]', message: /must be a string/ },
  'bad label key': { mutate: (h) => { (h.metadata as Json).labels = { 'bad key': 'x' }; }, field: 'metadata.labels["bad key"]' },
  'bad label value': { mutate: (h) => { (h.metadata as Json).labels = { rack: 'rack 7' }; }, field: 'metadata.labels["rack"]', message: /label value/ },
  'annotations not a map': { mutate: (h) => { (h.metadata as Json).annotations = ['a']; }, field: 'metadata.annotations', message: /must be an object, got array/ },
  'spec not an object': { mutate: (h) => { h.spec = []; }, field: 'spec', message: /got array/ },
  'unknown spec field': { mutate: (h) => { spec(h).networkInterfaces = []; }, field: 'spec.networkInterfaces', message: /unknown field/ },
  'typo in bmc field': { mutate: (h) => { spec(h).bmc = { adress: 'ipmi://1.2.3.4', address: '', credentialsName: 'x' }; }, field: 'spec.bmc.adress', message: /^spec\.bmc\.adress: unknown field$/ },
  'missing online': { mutate: (h) => { delete spec(h).online; }, field: 'spec.online', message: /required/ },
  'online as a string': { mutate: (h) => { spec(h).online = 'true'; }, field: 'spec.online', message: /must be a boolean, got string/ },
  'bmc without credentialsName': { mutate: (h) => { spec(h).bmc = { address: 'ipmi://1.2.3.4' }; }, field: 'spec.bmc.credentialsName', message: /required/ },
  'bmc address unknown type': { mutate: (h) => { (spec(h).bmc as Json).address = 'bogus://10.0.0.1'; }, field: 'spec.bmc.address', message: /unknown BMC type 'bogus'/ },
  'bmc address with credentials': { mutate: (h) => { (spec(h).bmc as Json).address = 'ipmi://admin:pw@10.0.0.1'; }, field: 'spec.bmc.address', message: /contains credentials/ },
  'bmc address bad port': { mutate: (h) => { (spec(h).bmc as Json).address = 'ipmi://10.0.0.1:99999'; }, field: 'spec.bmc.address', message: /port/ },
  'disableCertificateVerification as string': { mutate: (h) => { (spec(h).bmc as Json).disableCertificateVerification = 'yes'; }, field: 'spec.bmc.disableCertificateVerification' },
  'bootMACAddress with dashes': { mutate: (h) => { spec(h).bootMACAddress = '00-5c-52-31-3a-9c'; }, field: 'spec.bootMACAddress', message: /MAC address/ },
  'bootMACAddress too short': { mutate: (h) => { spec(h).bootMACAddress = '00:5c:52:31:3a'; }, field: 'spec.bootMACAddress' },
  'libvirt needs a boot MAC': { mutate: (h) => { (spec(h).bmc as Json).address = 'libvirt://192.168.122.1/'; delete spec(h).bootMACAddress; }, field: 'spec.bootMACAddress', message: /requires a bootMACAddress/ },
  'disabled inspection needs a boot MAC': { mutate: (h) => { spec(h).inspectionMode = 'disabled'; delete spec(h).bootMACAddress; }, field: 'spec.bootMACAddress', message: /inspection is disabled/ },
  'IPMI cannot do secure boot': { mutate: (h) => { (spec(h).bmc as Json).address = 'ipmi://10.0.0.1'; spec(h).bootMode = 'UEFISecureBoot'; }, field: 'spec.bootMode', message: /does not support secure boot/ },
  'IPMI cannot do hardware RAID': { mutate: (h) => { (spec(h).bmc as Json).address = 'ipmi://10.0.0.1'; spec(h).raid = { hardwareRAIDVolumes: [{ level: '1' }] }; }, field: 'spec.raid.hardwareRAIDVolumes', message: /does not support configuring RAID/ },
  'bad bootMode': { mutate: (h) => { spec(h).bootMode = 'uefi'; }, field: 'spec.bootMode', message: /supported values: "UEFI", "UEFISecureBoot", "legacy"/ },
  'bad automatedCleaningMode': { mutate: (h) => { spec(h).automatedCleaningMode = 'full'; }, field: 'spec.automatedCleaningMode' },
  'bad inspectionMode': { mutate: (h) => { spec(h).inspectionMode = 'quick'; }, field: 'spec.inspectionMode' },
  'bad hardwareProfile': { mutate: (h) => { spec(h).hardwareProfile = 'supermicro'; }, field: 'spec.hardwareProfile' },
  'spec.firmware is deprecated': { mutate: (h) => { spec(h).firmware = { virtualizationEnabled: true }; }, field: 'spec.firmware', message: /deprecated/ },
  'image without url': { mutate: (h) => { spec(h).image = { checksum: 'abc' }; }, field: 'spec.image.url', message: /required/ },
  'image url empty': { mutate: (h) => { (spec(h).image as Json).url = ''; }, field: 'spec.image.url', message: /empty/ },
  'image url not a URL': { mutate: (h) => { (spec(h).image as Json).url = 'images/node.qcow2'; }, field: 'spec.image.url', message: /invalid/ },
  'image url scheme unsupported': { mutate: (h) => { (spec(h).image as Json).url = 'ftp://images.example/node.qcow2'; }, field: 'spec.image.url', message: /"ftp" is not supported/ },
  'image without checksum': { mutate: (h) => { delete (spec(h).image as Json).checksum; }, field: 'spec.image.checksum', message: /checksum is required for normal images/ },
  'bad checksumType': { mutate: (h) => { (spec(h).image as Json).checksumType = 'sha1'; }, field: 'spec.image.checksumType', message: /"md5", "sha256", "sha512", "auto"/ },
  'bad image format': { mutate: (h) => { (spec(h).image as Json).format = 'iso'; }, field: 'spec.image.format' },
  'oci image with checksum': { mutate: (h) => { spec(h).image = { url: 'OCI://registry.example/os:1', checksum: 'abc' }; }, field: 'spec.image.checksum', message: /oci:\/\// },
  'oci checked before live-iso': { mutate: (h) => { spec(h).image = { url: 'oci://registry.example/os:1', checksum: 'abc', format: 'live-iso' }; }, field: 'spec.image.checksum' },
  'live-iso with customDeploy': { mutate: (h) => { spec(h).image = { url: 'http://x.example/a.iso', format: 'live-iso' }; spec(h).customDeploy = { method: 'install_coreos' }; }, field: 'spec.customDeploy', message: /live-iso/ },
  'customDeploy without method': { mutate: (h) => { spec(h).customDeploy = {}; }, field: 'spec.customDeploy.method', message: /required/ },
  'customDeploy with empty method': { mutate: (h) => { spec(h).customDeploy = { method: '' }; }, field: 'spec.customDeploy.method' },
  'deviceName not under /dev': { mutate: (h) => { spec(h).rootDeviceHints = { deviceName: 'sda' }; }, field: 'spec.rootDeviceHints.deviceName', message: /must be a \/dev\/ path, not "sda"/ },
  'deviceName by-id link': { mutate: (h) => { spec(h).rootDeviceHints = { deviceName: '/dev/disk/by-id/wwn-0x5000' }; }, field: 'spec.rootDeviceHints.deviceName', message: /by-path/ },
  'negative minSizeGigabytes': { mutate: (h) => { spec(h).rootDeviceHints = { minSizeGigabytes: -1 }; }, field: 'spec.rootDeviceHints.minSizeGigabytes', message: /at least 0/ },
  'fractional minSizeGigabytes': { mutate: (h) => { spec(h).rootDeviceHints = { minSizeGigabytes: 1.5 }; }, field: 'spec.rootDeviceHints.minSizeGigabytes', message: /integer/ },
  'unknown hint': { mutate: (h) => { spec(h).rootDeviceHints = { size: 100 }; }, field: 'spec.rootDeviceHints.size', message: /unknown field/ },
  'both RAID kinds': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1' }], softwareRAIDVolumes: [{ level: '1' }] }; }, field: 'spec.raid', message: /can not be set at the same time/ },
  'unknown RAID field': { mutate: (h) => { spec(h).raid = { volumes: [] }; }, field: 'spec.raid.volumes' },
  'hardware RAID without level': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ name: 'os' }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].level', message: /required/ },
  'hardware RAID bad level': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '10' }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].level' },
  'hardware RAID level as number': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: 1 }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].level', message: /must be a string/ },
  'hardware RAID name too long': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', name: 'v'.repeat(65) }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].name', message: /at most 64/ },
  'hardware RAID duplicate names': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', name: 'os' }, { level: '0', name: 'os' }] }; }, field: 'spec.raid.hardwareRAIDVolumes[1].name', message: /duplicate/ },
  'physicalDisks without controller': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', physicalDisks: ['a', 'b'] }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].controller' },
  'numberOfPhysicalDisks mismatch': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', controller: 'c', physicalDisks: ['a', 'b'], numberOfPhysicalDisks: 3 }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].numberOfPhysicalDisks', message: /is 3 but physicalDisks lists 2/ },
  'numberOfPhysicalDisks zero': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', numberOfPhysicalDisks: 0 }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].numberOfPhysicalDisks' },
  'negative sizeGibibytes': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', sizeGibibytes: -10 }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].sizeGibibytes' },
  'physicalDisks entry not a string': { mutate: (h) => { spec(h).raid = { hardwareRAIDVolumes: [{ level: '1', controller: 'c', physicalDisks: ['a', 2] }] }; }, field: 'spec.raid.hardwareRAIDVolumes[0].physicalDisks[1]' },
  'three software volumes': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1' }, { level: '0' }, { level: '0' }] }; }, field: 'spec.raid.softwareRAIDVolumes', message: /at most 2/ },
  'first software volume not RAID1': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '0' }] }; }, field: 'spec.raid.softwareRAIDVolumes[0].level', message: /RAID1/ },
  'software RAID level 5': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1' }, { level: '5' }] }; }, field: 'spec.raid.softwareRAIDVolumes[1].level' },
  'two root volumes': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1', rootVolume: true }, { level: '1', rootVolume: true }] }; }, field: 'spec.raid.softwareRAIDVolumes[1].rootVolume', message: /only one/ },
  'root volume not RAID1': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1' }, { level: '0', rootVolume: true }] }; }, field: 'spec.raid.softwareRAIDVolumes[1].rootVolume', message: /must be RAID1/ },
  'root volume with root device hints': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1', rootVolume: true }] }; spec(h).rootDeviceHints = { deviceName: '/dev/sda' }; }, field: 'spec.rootDeviceHints', message: /software RAID root volume/ },
  'software physicalDisks with one disk': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1', physicalDisks: [{ deviceName: '/dev/sda' }] }] }; }, field: 'spec.raid.softwareRAIDVolumes[0].physicalDisks', message: /at least 2/ },
  'software physicalDisks bad hint': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1', physicalDisks: [{ deviceName: '/dev/sda' }, { deviceName: 'sdb' }] }] }; }, field: 'spec.raid.softwareRAIDVolumes[0].physicalDisks[1].deviceName' },
  'software physicalDisks unknown hint field': { mutate: (h) => { spec(h).raid = { softwareRAIDVolumes: [{ level: '1', physicalDisks: [{ name: '/dev/sda' }, { name: '/dev/sdb' }] }] }; }, field: 'spec.raid.softwareRAIDVolumes[0].physicalDisks[0].name', message: /unknown field/ },
  'disablePowerOff with online false': { mutate: (h) => { spec(h).online = false; spec(h).disablePowerOff = true; }, field: 'spec.disablePowerOff', message: /online set to false/ },
  'userData in another namespace': { mutate: (h) => { spec(h).userData = { name: 'ud', namespace: 'other' }; }, field: 'spec.userData.namespace', message: /cross-namespace/ },
  'metaData in another namespace': { mutate: (h) => { spec(h).metaData = { name: 'md', namespace: 'kube-system' }; }, field: 'spec.metaData.namespace' },
  'networkData without name': { mutate: (h) => { spec(h).networkData = { namespace: 'metal3' }; }, field: 'spec.networkData.name', message: /required/ },
  'secret ref unknown field': { mutate: (h) => { spec(h).userData = { name: 'ud', key: 'userData' }; }, field: 'spec.userData.key' },
  'inspectionMode contradicts annotation': { mutate: (h) => { (h.metadata as Json).annotations = { 'inspect.metal3.io': 'disabled' }; spec(h).inspectionMode = 'agent'; }, field: 'spec.inspectionMode', message: /contradicts/ },
  'cleaning mode annotation bad value': { mutate: (h) => { (h.metadata as Json).annotations = { 'rackside.io/cleaning-mode': 'shred' }; }, field: 'metadata.annotations["rackside.io/cleaning-mode"]', message: /invalid value "shred"; allowed are "metadata" or "erase"/ },
  'inspect annotation bad value': { mutate: (h) => { (h.metadata as Json).annotations = { 'inspect.metal3.io': 'now' }; }, field: 'metadata.annotations["inspect.metal3.io"]', message: /"disabled" or ""/ },
  'reboot annotation not JSON': { mutate: (h) => { (h.metadata as Json).annotations = { 'reboot.metal3.io': 'hard' }; }, field: 'metadata.annotations["reboot.metal3.io"]', message: /JSON/ },
  'reboot annotation bad mode': { mutate: (h) => { (h.metadata as Json).annotations = { 'reboot.metal3.io/capm3-remediation': '{"mode":"cold"}' }; }, field: 'metadata.annotations["reboot.metal3.io/capm3-remediation"]', message: /invalid mode/ },
  'hardware details without disabled inspection': { mutate: (h) => { (h.metadata as Json).annotations = { 'inspect.metal3.io/hardwaredetails': '{"cpu":{}}' }; }, field: 'metadata.annotations["inspect.metal3.io/hardwaredetails"]', message: /inspection is disabled/ },
  'hardware details not JSON': { mutate: (h) => { spec(h).inspectionMode = 'disabled'; (h.metadata as Json).annotations = { 'inspect.metal3.io/hardwaredetails': '{cpu' }; }, field: 'metadata.annotations["inspect.metal3.io/hardwaredetails"]' },
  'status annotation bad operationalStatus': { mutate: (h) => { (h.metadata as Json).annotations = { 'baremetalhost.metal3.io/status': '{"operationalStatus":"happy"}' }; }, field: 'metadata.annotations["baremetalhost.metal3.io/status"]', message: /operationalStatus/ },
  'detached annotation bad deleteAction': { mutate: (h) => { (h.metadata as Json).annotations = { 'baremetalhost.metal3.io/detached': '{"deleteAction":"now"}' }; }, field: 'metadata.annotations["baremetalhost.metal3.io/detached"]' },
  'taint without effect': { mutate: (h) => { spec(h).taints = [{ key: 'a' }]; }, field: 'spec.taints[0].effect', message: /required/ },
  'taint bad effect': { mutate: (h) => { spec(h).taints = [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'Never' }]; }, field: 'spec.taints[1].effect' },
  'consumerRef unknown field': { mutate: (h) => { spec(h).consumerRef = { kind: 'Machine', owner: 'x' }; }, field: 'spec.consumerRef.owner' },
  'field prefix is prepended': { mutate: (h) => { spec(h).bootMode = 'bios'; }, field: 'items[2].spec.bootMode', prefix: 'items[2].' },
};

for (const [name, c] of Object.entries(invalid)) {
  test(`decodeHost rejects: ${name}`, () => {
    const h = baseHost();
    c.mutate(h);
    assertInvalid(() => decodeHost(h, c.prefix), c.field, c.message);
  });
}

test('decodeHost rejects non-objects at the root with the prefix path', () => {
  assertInvalid(() => decodeHost('apiVersion: metal3.io/v1alpha1'), '', /must be an object, got string/);
  assertInvalid(() => decodeHost(null, 'items[0].'), 'items[0]', /got null/);
});

test('decodeManifest dispatches on kind and names the supported kinds', () => {
  assert.equal(decodeManifest(baseHost()).kind, 'BareMetalHost');
  assertInvalid(() => decodeManifest({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), 'kind', /unsupported kind "ConfigMap"; supported kinds: BareMetalHost, Secret/);
  assertInvalid(() => decodeManifest({ apiVersion: 'v1' }, 'items[3].'), 'items[3].kind', /required.*BareMetalHost, Secret/);
  assertInvalid(() => decodeManifest({ kind: 7 }), 'kind', /must be a string/);
  assertInvalid(() => decodeManifest([]), '', /got array/);
});
