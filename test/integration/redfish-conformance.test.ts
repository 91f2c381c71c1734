// The shared BMC driver conformance suite against the Redfish driver talking HTTPS (self-signed
// certificate, verification off) to the virtual Redfish BMC, in its generic, iDRAC and iLO 5
// flavors. Needs the `openssl` CLI for the certificate.
import { spawnSync } from 'node:child_process';
import { DriverRegistry, registerBuiltinDrivers } from '../../drivers/index.js';
import { runBmcDriverConformance } from '../conformance/bmc-driver.suite.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmcOptions } from '../lab/redfish/virtual-bmc.js';
import { test } from 'node:test';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (!hasOpenssl && process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') {
  test('openssl is installed', () => { throw new Error('openssl is required for the Redfish integration tests'); });
}
const missing = hasOpenssl ? undefined : 'openssl CLI not installed (needed for the self-signed certificate)';

const flavors: readonly [string, string, VirtualRedfishBmcOptions][] = [
  ['generic, session auth, delayed PowerState', 'redfish', { knobs: { powerDelayMs: 40, taskPolls: 2 } }],
  ['iDRAC flavor', 'idrac-virtualmedia', { flavor: 'idrac', knobs: { taskPolls: 1 } }],
  ['iLO 5 flavor', 'ilo5-virtualmedia', { flavor: 'ilo5', knobs: { taskPolls: 1 } }],
];

for (const [label, scheme, options] of flavors) {
  runBmcDriverConformance({
    name: `redfish (${label})`,
    setup: async () => {
      const bmc = await startVirtualRedfishBmc(options);
      const registry = new DriverRegistry();
      registerBuiltinDrivers(registry);
      const driver = registry.create(`${scheme}://${bmc.host}`, { username: 'admin', password: 'password' }, { disableCertificateVerification: true, timeoutMs: 5000 });
      return { driver, dispose: async () => { await driver.close(); await bmc.stop(); } };
    },
    skips: {
      ...(missing === undefined ? {} : Object.fromEntries(['power', 'bootDevice', 'virtualMedia', 'biosSettings', 'firmware', 'tasks', 'raid', 'eventSubscriptions', 'secureBoot', 'inventory', 'info', 'unsupported-is-typed', 'close.idempotent'].map((k) => [k, missing]))),
    },
    powerWait: { timeoutMs: 5000, pollMs: 10 },
    taskWait: { timeoutMs: 5000, pollMs: 5 },
  });
}
