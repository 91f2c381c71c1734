/**
 * @module The `noop` capabilities the registry puts where a driver implements nothing: every
 * method rejects with `UnsupportedCapabilityError`, so callers never null-check (ironic's
 * `noop.py`). Distinct from the fake driver (fake/), which simulates a working BMC.
 * @pure
 */
import type { BmcCapabilitySet, CapabilityName } from './capabilities.js';
import { UnsupportedCapabilityError } from './errors.js';

/** Who the noop speaks for, named in its errors. */
export interface NoopOwner {
  readonly address: string;
  readonly driver: string;
}

/** Builds the full set of noop capabilities for one driver instance. */
export function createNoopCapabilities(owner: NoopOwner): BmcCapabilitySet {
  const reject = (capability: CapabilityName, operation: string) => (): Promise<never> =>
    Promise.reject(new UnsupportedCapabilityError(capability, operation, owner));
  return {
    power: { getPowerState: reject('power', 'getPowerState'), setPower: reject('power', 'setPower') },
    bootDevice: { setBootDevice: reject('bootDevice', 'setBootDevice'), getBootDevice: reject('bootDevice', 'getBootDevice') },
    virtualMedia: {
      insertMedia: reject('virtualMedia', 'insertMedia'),
      ejectMedia: reject('virtualMedia', 'ejectMedia'),
      getMediaStatus: reject('virtualMedia', 'getMediaStatus'),
    },
    biosSettings: {
      getBiosSettings: reject('biosSettings', 'getBiosSettings'),
      applyBiosSettings: reject('biosSettings', 'applyBiosSettings'),
    },
    firmware: {
      getFirmwareInventory: reject('firmware', 'getFirmwareInventory'),
      simpleUpdate: reject('firmware', 'simpleUpdate'),
    },
    tasks: { getTask: reject('tasks', 'getTask') },
    raid: { getRaidConfig: reject('raid', 'getRaidConfig'), applyRaidConfig: reject('raid', 'applyRaidConfig') },
    eventSubscriptions: {
      createSubscription: reject('eventSubscriptions', 'createSubscription'),
      deleteSubscription: reject('eventSubscriptions', 'deleteSubscription'),
      listSubscriptions: reject('eventSubscriptions', 'listSubscriptions'),
    },
    secureBoot: { getSecureBoot: reject('secureBoot', 'getSecureBoot'), setSecureBoot: reject('secureBoot', 'setSecureBoot') },
    inventory: { getInventory: reject('inventory', 'getInventory') },
    info: { getBmcInfo: reject('info', 'getBmcInfo') },
  };
}
