// The shared BMC driver conformance suite against the native IPMI driver talking to the
// in-process fake lanplus BMC (cipher suite 17, boot flags read back in full). The same suite
// runs against ipmi_sim in test/integration/ipmi-conformance.test.ts.
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { runBmcDriverConformance } from '../../conformance/bmc-driver.suite.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';
import { IPMI_CONFORMANCE_LIMITS, IPMI_CONFORMANCE_SKIPS } from '../../lab/ipmi/conformance-skips.js';

runBmcDriverConformance({
  name: 'ipmi (fake lanplus BMC, cipher suite 17)',
  setup: async () => {
    const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: 'password' }] });
    const registry = new DriverRegistry();
    registerBuiltinDrivers(registry);
    const driver = registry.create(`ipmi://127.0.0.1:${bmc.port}`, { username: 'admin', password: 'password' }, { timeoutMs: 1500 });
    return { driver, dispose: async () => { await driver.close(); await bmc.stop(); } };
  },
  skips: IPMI_CONFORMANCE_SKIPS,
  limits: IPMI_CONFORMANCE_LIMITS,
  powerWait: { timeoutMs: 3000, pollMs: 10 },
});
