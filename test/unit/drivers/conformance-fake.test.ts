// The shared BMC driver conformance suite (test/conformance/bmc-driver.suite.ts) against the fake driver.
import { DriverRegistry } from '../../../drivers/index.js';
import { FakeBmcPool, createFakeDriverFactory } from '../../../drivers/fake/fake-driver.js';
import { runBmcDriverConformance } from '../../conformance/bmc-driver.suite.js';

runBmcDriverConformance({
  name: 'fake (delayed power state)',
  setup: () => {
    const registry = new DriverRegistry();
    registry.register('fake', createFakeDriverFactory(new FakeBmcPool({ powerOnDelayCalls: 2, powerOffDelayCalls: 1, taskCalls: 2 })));
    const driver = registry.create('fake://conformance-1', { username: 'u', password: 'p' });
    return Promise.resolve({ driver, dispose: () => driver.close() });
  },
  powerWait: { timeoutMs: 5000, pollMs: 1 },
  taskWait: { timeoutMs: 5000, pollMs: 1 },
});
