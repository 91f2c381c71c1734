// Golden tests for drivers/bmc-address.ts. The first three tables reproduce BMO's
// pkg/hardwareutils/bmc/access_test.go (TestParse, TestStaticDriverInfo, TestDriverInfo,
// TestUnknownType) case by case; the rest cover rackside's stricter/leaner edges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bmcCapabilities, parseBmcAddress, redactBmcAddress, resolveIpmiTarget, resolveRedfishTarget } from '../../../drivers/index.js';
import { BmcAddressError, BmcAddressErrorCode, type BmcAddressErrorCodeValue } from '../../../drivers/bmc-address.js';

interface ParseCase {
  address: string;
  /** Go url.Scheme */
  scheme?: string;
  /** Go url.Hostname() */
  hostname?: string;
  /** Go url.Host */
  host?: string;
  /** Go url.Port(), as a number */
  port?: number;
  path?: string;
  query?: Record<string, string[]>;
  error?: BmcAddressErrorCodeValue;
}

// access_test.go TestParse, scenario names kept verbatim.
const upstreamParse: Record<string, ParseCase> = {
  'libvirt url': {
    address: 'libvirt://192.168.122.1:6233/?abc=def', scheme: 'libvirt', port: 6233,
    hostname: '192.168.122.1', host: '192.168.122.1:6233', path: '/', query: { abc: ['def'] },
  },
  'ipmi default scheme and port': {
    address: '192.168.122.1', scheme: 'ipmi', hostname: '192.168.122.1', host: '192.168.122.1', path: '',
  },
  'ipmi default scheme and port, hostname': {
    address: 'my.favoritebmc.com', scheme: 'ipmi', hostname: 'my.favoritebmc.com', host: 'my.favoritebmc.com', path: '',
  },
  'valid dns hostname': {
    address: 'my.examplehost.com', scheme: 'ipmi', hostname: 'my.examplehost.com', host: 'my.examplehost.com', path: '',
  },
  'invalid dns hostname': { address: 'my-.examplehost.com', error: BmcAddressErrorCode.invalidHost },
  'invalid ipv6 host address': { address: '[fe80::fc33:62ff:fe33:8xff]:6223', error: BmcAddressErrorCode.invalidHost },
  'host and port': {
    address: '192.168.122.1:6233', scheme: 'ipmi', port: 6233, hostname: '192.168.122.1', host: '192.168.122.1:6233', path: '',
  },
  'host and port, ipv6': {
    address: '[fe80::fc33:62ff:fe83:8a76]:6233', scheme: 'ipmi', port: 6233,
    hostname: 'fe80::fc33:62ff:fe83:8a76', host: '[fe80::fc33:62ff:fe83:8a76]:6233', path: '',
  },
  'host and no port, ipv6': { address: '[fe80::fc33:62ff:fe83:8a76]', error: BmcAddressErrorCode.syntax },
  'ipmi full url': {
    address: 'ipmi://192.168.122.1:6233', scheme: 'ipmi', port: 6233, hostname: '192.168.122.1', host: '192.168.122.1:6233', path: '',
  },
  'ipmi url, no sep': {
    address: 'ipmi:192.168.122.1', scheme: 'ipmi', hostname: '192.168.122.1', host: '192.168.122.1', path: '',
  },
  'ipmi url with port, no sep': {
    address: 'ipmi:192.168.122.1:6233', scheme: 'ipmi', port: 6233, hostname: '192.168.122.1', host: '192.168.122.1:6233', path: '',
  },
  'redfish url': {
    address: 'redfish://192.168.122.1', scheme: 'redfish', hostname: '192.168.122.1', host: '192.168.122.1', path: '',
  },
  'redfish url path': {
    address: 'redfish://192.168.122.1:6233/foo', scheme: 'redfish', port: 6233,
    hostname: '192.168.122.1', host: '192.168.122.1:6233', path: '/foo',
  },
  'redfish url ipv6': {
    address: 'redfish://[fe80::fc33:62ff:fe83:8a76]', scheme: 'redfish',
    hostname: 'fe80::fc33:62ff:fe83:8a76', host: '[fe80::fc33:62ff:fe83:8a76]', path: '',
  },
  'redfish url path ipv6': {
    address: 'redfish://[fe80::fc33:62ff:fe83:8a76]:6233/foo', scheme: 'redfish', port: 6233,
    hostname: 'fe80::fc33:62ff:fe83:8a76', host: '[fe80::fc33:62ff:fe83:8a76]:6233', path: '/foo',
  },
  'redfish url no sep': {
    address: 'redfish:192.168.122.1', scheme: 'redfish', hostname: '192.168.122.1', host: '192.168.122.1', path: '',
  },
  // TestUnknownType
  'unknown type': { address: 'foo://192.168.122.1', error: BmcAddressErrorCode.unknownType },
};

// Beyond the upstream table: every scheme family, and the error paths rackside adds.
const moreParse: Record<string, ParseCase> = {
  'redfish+https with system path': {
    address: 'redfish+https://10.0.0.5/redfish/v1/Systems/1', scheme: 'redfish+https',
    hostname: '10.0.0.5', host: '10.0.0.5', path: '/redfish/v1/Systems/1',
  },
  'scheme is lower-cased like Go': {
    address: 'IDRAC-VirtualMedia+HTTPS://bmc-7.rack2/redfish/v1/Systems/System.Embedded.1',
    scheme: 'idrac-virtualmedia+https', hostname: 'bmc-7.rack2', host: 'bmc-7.rack2',
    path: '/redfish/v1/Systems/System.Embedded.1',
  },
  'opaque form with query': {
    address: 'ipmi:10.1.1.1?privilegelevel=OPERATOR', scheme: 'ipmi', hostname: '10.1.1.1', host: '10.1.1.1',
    path: '', query: { privilegelevel: ['OPERATOR'] },
  },
  'opaque ipv6 with port': {
    address: 'redfish-uefihttp:[2001:db8::7]:8443', scheme: 'redfish-uefihttp', port: 8443,
    hostname: '2001:db8::7', host: '[2001:db8::7]:8443', path: '',
  },
  'bare host with path becomes ipmi url': {
    address: 'bmc1/ignored', scheme: 'ipmi', hostname: 'bmc1', host: 'bmc1', path: '/ignored',
  },
  'ipv4-mapped ipv6': {
    address: 'ipmi://[::ffff:10.0.0.1]:623', scheme: 'ipmi', port: 623, hostname: '::ffff:10.0.0.1', host: '[::ffff:10.0.0.1]:623', path: '',
  },
  'percent-encoded path is decoded': {
    address: 'redfish://h/redfish/v1/Systems/a%20b', scheme: 'redfish', hostname: 'h', host: 'h', path: '/redfish/v1/Systems/a b',
  },
  'fake scheme': { address: 'fake://rack1-node3', scheme: 'fake', hostname: 'rack1-node3', host: 'rack1-node3', path: '' },
  'legacy ilo4+https still parses': { address: 'ilo4+https://10.2.2.2', scheme: 'ilo4+https', hostname: '10.2.2.2', host: '10.2.2.2', path: '' },
  // rackside leniency: Go would take "bmc1.rack" as the scheme.
  'bare name:port means ipmi': {
    address: 'bmc1.rack:623', scheme: 'ipmi', port: 623, hostname: 'bmc1.rack', host: 'bmc1.rack:623', path: '',
  },
  empty: { address: '', error: BmcAddressErrorCode.empty },
  'non-numeric port': { address: 'ipmi://192.168.122.1:abc', error: BmcAddressErrorCode.invalidPort },
  'port out of range': { address: 'redfish://192.168.122.1:65536/', error: BmcAddressErrorCode.invalidPort },
  'port zero': { address: 'ipmi:10.0.0.1:0', error: BmcAddressErrorCode.invalidPort },
  'missing host (opaque)': { address: 'ipmi:', error: BmcAddressErrorCode.missingHost },
  'missing host (authority)': { address: 'redfish:///redfish/v1/Systems/1', error: BmcAddressErrorCode.missingHost },
  'unknown transport suffix': { address: 'redfish+ftp://10.0.0.1', error: BmcAddressErrorCode.unknownType },
  'transport on a scheme without variants': { address: 'ipmi+https://10.0.0.1', error: BmcAddressErrorCode.unknownType },
  'ilo5 only registers +https': { address: 'ilo5+http://10.0.0.1', error: BmcAddressErrorCode.unknownType },
  'no scheme but an authority': { address: '//10.0.0.1', error: BmcAddressErrorCode.unknownType },
  'ipv6 zone id': { address: 'redfish://[fe80::1%25eth0]/', error: BmcAddressErrorCode.invalidHost },
  'ipv6 with too many groups': { address: 'ipmi://[1:2:3:4:5:6:7:8:9]', error: BmcAddressErrorCode.invalidHost },
  'ipv6 :: not expanding': { address: 'ipmi://[1:2:3:4::5:6:7:8]', error: BmcAddressErrorCode.invalidHost },
  'unbracketed ipv6 without scheme': { address: 'fe80::1', error: BmcAddressErrorCode.syntax },
  'missing close bracket': { address: 'redfish://[fe80::1/x', error: BmcAddressErrorCode.syntax },
  'label longer than 63': { address: `ipmi://${'a'.repeat(64)}.example`, error: BmcAddressErrorCode.invalidHost },
  'underscore in host': { address: 'redfish://bmc_1.example', error: BmcAddressErrorCode.invalidHost },
  'trailing dot': { address: 'redfish://bmc.example.', error: BmcAddressErrorCode.invalidHost },
  'space in host': { address: 'bmc 1', error: BmcAddressErrorCode.invalidHost },
  'control character': { address: 'ipmi://10.0.0.1\n', error: BmcAddressErrorCode.syntax },
  'bad percent escape in path': { address: 'redfish://h/%zz', error: BmcAddressErrorCode.syntax },
  'leading colon': { address: ':623', error: BmcAddressErrorCode.missingHost },
  'too long': { address: `ipmi://${'a.'.repeat(1100)}b`, error: BmcAddressErrorCode.tooLong },
  'credentials in url': { address: 'redfish://admin:hunter2@10.0.0.1/', error: BmcAddressErrorCode.credentials },
  'credentials in bare host': { address: 'admin@10.0.0.1:623', error: BmcAddressErrorCode.credentials },
};

for (const [name, c] of Object.entries({ ...upstreamParse, ...moreParse })) {
  test(`parseBmcAddress: ${name}`, () => {
    if (c.error !== undefined) {
      assert.throws(() => parseBmcAddress(c.address), (err: unknown) => {
        assert.ok(err instanceof BmcAddressError, 'a BmcAddressError');
        assert.equal(err.code, c.error);
        assert.ok(err.message.length > 10, 'a message that names the problem');
        return true;
      });
      return;
    }
    const a = parseBmcAddress(c.address);
    assert.deepEqual(
      { scheme: a.scheme, hostname: a.hostname, host: a.host, port: a.port, path: a.path, query: a.query, raw: a.raw },
      { scheme: c.scheme, hostname: c.hostname, host: c.host, port: c.port, path: c.path, query: c.query ?? {}, raw: c.address },
    );
  });
}

test('unknown scheme error lists the supported types', () => {
  assert.throws(() => parseBmcAddress('foo://192.168.122.1'), (err: unknown) => {
    assert.ok(err instanceof BmcAddressError);
    assert.match(err.message, /unknown BMC type 'foo'/);
    for (const s of ['ipmi', 'redfish(+http|+https)', 'redfish-virtualmedia(+http|+https)', 'idrac-virtualmedia', 'fake']) {
      assert.ok(err.message.includes(s), `mentions ${s}`);
    }
    return true;
  });
});

test('invalid host error keeps the upstream wording', () => {
  assert.throws(() => parseBmcAddress('my-.examplehost.com'), /BMC address hostname\/IP : \[my-\.examplehost\.com\] is invalid/);
});

test('errors never echo credentials', () => {
  for (const address of ['redfish://admin:hunter2@10.0.0.1/', 'admin:hunter2@10.0.0.1', 'foo://admin:hunter2@h']) {
    assert.throws(() => parseBmcAddress(address), (err: unknown) => {
      assert.ok(err instanceof BmcAddressError);
      assert.ok(!err.message.includes('hunter2'), err.message);
      assert.ok(!err.address.includes('hunter2'), err.address);
      return true;
    });
  }
  assert.equal(redactBmcAddress('redfish://u:p@h:8443/x?y=@'), 'redfish://***@h:8443/x?y=@');
  assert.equal(redactBmcAddress('redfish://h/x'), 'redfish://h/x');
});

test('type, transport, vendor come from the scheme', () => {
  const a = parseBmcAddress('idrac-virtualmedia+http://10.0.0.9');
  assert.deepEqual([a.baseScheme, a.type, a.transport, a.vendor], ['idrac-virtualmedia', 'redfish', 'http', 'idrac']);
  const b = parseBmcAddress('10.0.0.9');
  assert.deepEqual([b.baseScheme, b.type, b.transport, b.vendor], ['ipmi', 'ipmi', undefined, undefined]);
  const c = parseBmcAddress('fake://x');
  assert.equal(c.type, 'fake');
});

// access_test.go TestStaticDriverInfo: the Ironic interfaces each scheme selects.
const upstreamStatic: Record<string, { input: string; needsMac: boolean; driver: string; bios: string; boot: string;
  inspect: string; firmware: string; management: string; power: string; vendor: string }> = {
  ipmi: { input: 'ipmi://192.168.122.1:6233', needsMac: false, driver: 'ipmi', bios: '', boot: 'ipxe', inspect: '', firmware: '', management: '', power: '', vendor: '' },
  libvirt: { input: 'libvirt://192.168.122.1', needsMac: true, driver: 'ipmi', bios: '', boot: 'ipxe', inspect: '', firmware: '', management: '', power: '', vendor: '' },
  redfish: { input: 'redfish://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'ipxe', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'redfish virtual media': { input: 'redfish-virtualmedia://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'redfish virtual media HTTP': { input: 'redfish-virtualmedia+http://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'redfish virtual media HTTPS': { input: 'redfish-virtualmedia+https://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'redfish uefi http boot': { input: 'redfish-uefihttp+https://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-https', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'idrac redfish': { input: 'idrac-redfish://192.168.122.1', needsMac: false, driver: 'idrac', bios: 'idrac-redfish', boot: 'ipxe', inspect: 'redfish', firmware: 'redfish', management: 'idrac-redfish', power: 'idrac-redfish', vendor: 'idrac-redfish' },
  'ilo5 virtual media': { input: 'ilo5-virtualmedia://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'ilo5 virtual media HTTP': { input: 'ilo5-virtualmedia+http://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'ilo5 virtual media HTTPS': { input: 'ilo5-virtualmedia+https://192.168.122.1', needsMac: false, driver: 'redfish', bios: '', boot: 'redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: '', power: '', vendor: '' },
  'idrac virtual media': { input: 'idrac-virtualmedia://192.168.122.1', needsMac: false, driver: 'idrac', bios: 'idrac-redfish', boot: 'idrac-redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: 'idrac-redfish', power: 'idrac-redfish', vendor: 'idrac-redfish' },
  'idrac virtual media HTTP': { input: 'idrac-virtualmedia+http://192.168.122.1', needsMac: false, driver: 'idrac', bios: 'idrac-redfish', boot: 'idrac-redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: 'idrac-redfish', power: 'idrac-redfish', vendor: 'idrac-redfish' },
  'idrac virtual media HTTPS': { input: 'idrac-virtualmedia+https://192.168.122.1', needsMac: false, driver: 'idrac', bios: 'idrac-redfish', boot: 'idrac-redfish-virtual-media', inspect: 'redfish', firmware: 'redfish', management: 'idrac-redfish', power: 'idrac-redfish', vendor: 'idrac-redfish' },
};

for (const [name, c] of Object.entries(upstreamStatic)) {
  test(`static driver info: ${name}`, () => {
    const caps = bmcCapabilities(c.input);
    const i = caps.interfaces;
    assert.deepEqual(
      { needsMac: caps.needsMac, driver: caps.driver, bios: i.bios, boot: i.boot, inspect: i.inspect, firmware: i.firmware, management: i.management, power: i.power, vendor: i.vendor },
      { needsMac: c.needsMac, driver: c.driver, bios: c.bios, boot: c.boot, inspect: c.inspect, firmware: c.firmware, management: c.management, power: c.power, vendor: c.vendor },
    );
  });
}

// access_test.go TestDriverInfo: redfish_address / redfish_system_id and the ipmi_* keys.
const upstreamRedfishInfo: Record<string, { input: string; endpoint: string; systemId: string | undefined }> = {
  Redfish: { input: 'redfish://192.168.122.1/redfish/v1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/redfish/v1/foo/bar' },
  'Redfish http': { input: 'redfish+http://192.168.122.1/foo/bar', endpoint: 'http://192.168.122.1', systemId: '/foo/bar' },
  'Redfish https': { input: 'redfish+https://192.168.122.1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/foo/bar' },
  'Redfish port': { input: 'redfish://192.168.122.1:8080/foo/bar', endpoint: 'https://192.168.122.1:8080', systemId: '/foo/bar' },
  'Redfish ipv6': { input: 'redfish://[fe80::fc33:62ff:fe83:8a76]/foo/bar', endpoint: 'https://[fe80::fc33:62ff:fe83:8a76]', systemId: '/foo/bar' },
  'Redfish ipv6 port': { input: 'redfish://[fe80::fc33:62ff:fe83:8a76]:8080/foo', endpoint: 'https://[fe80::fc33:62ff:fe83:8a76]:8080', systemId: '/foo' },
  'Redfish no system ID': { input: 'redfish+https://192.168.122.1/', endpoint: 'https://192.168.122.1', systemId: undefined },
  'Redfish wrong system ID': { input: 'redfish+https://192.168.122.1/redfish/v1/', endpoint: 'https://192.168.122.1', systemId: undefined },
  'Redfish virtual media': { input: 'redfish-virtualmedia://192.168.122.1/redfish/v1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/redfish/v1/foo/bar' },
  'Redfish virtual media wrong system ID': { input: 'redfish-virtualmedia://192.168.122.1/redfish/v1/', endpoint: 'https://192.168.122.1', systemId: undefined },
  'ilo5 virtual media': { input: 'ilo5-virtualmedia://192.168.122.1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/foo/bar' },
  'idrac redfish': { input: 'idrac-redfish://192.168.122.1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/foo/bar' },
  'idrac virtual media': { input: 'idrac-virtualmedia://192.168.122.1/redfish/v1/foo/bar', endpoint: 'https://192.168.122.1', systemId: '/redfish/v1/foo/bar' },
  'idrac virtual media wrong system ID': { input: 'idrac-virtualmedia://192.168.122.1/redfish/v1/', endpoint: 'https://192.168.122.1', systemId: undefined },
  // redfish_https.go: uefihttp always passes the path, even ''.
  'uefihttp keeps an empty system id': { input: 'redfish-uefihttp://192.168.122.1', endpoint: 'https://192.168.122.1', systemId: '' },
  'uefihttp keeps /redfish/v1': { input: 'redfish-uefihttp+http://192.168.122.1/redfish/v1', endpoint: 'http://192.168.122.1', systemId: '/redfish/v1' },
};

for (const [name, c] of Object.entries(upstreamRedfishInfo)) {
  test(`redfish target: ${name}`, () => {
    assert.deepEqual(resolveRedfishTarget(parseBmcAddress(c.input)), { endpoint: c.endpoint, systemId: c.systemId });
  });
}

test('ipmi target: default port and privilege level', () => {
  assert.deepEqual(resolveIpmiTarget(parseBmcAddress('ipmi://192.168.122.1')), { hostname: '192.168.122.1', port: 623, privilegeLevel: 'ADMINISTRATOR' });
});

test('ipmi target: privilege level from the query', () => {
  assert.deepEqual(resolveIpmiTarget(parseBmcAddress('ipmi://192.168.122.1?privilegelevel=OPERATOR')), { hostname: '192.168.122.1', port: 623, privilegeLevel: 'OPERATOR' });
});

test('ipmi target: explicit port and bracketed IPv6', () => {
  assert.deepEqual(resolveIpmiTarget(parseBmcAddress('[fd00::5]:6230')), { hostname: 'fd00::5', port: 6230, privilegeLevel: 'ADMINISTRATOR' });
});

test('query keys that look like Object.prototype members are plain keys', () => {
  const a = parseBmcAddress('ipmi://10.0.0.1?__proto__=x&constructor=y&privilegelevel=USER&privilegelevel=OPERATOR');
  assert.deepEqual(a.query.__proto__, ['x']);
  assert.deepEqual(a.query.constructor, ['y']);
  assert.equal(resolveIpmiTarget(a).privilegeLevel, 'USER');
});
