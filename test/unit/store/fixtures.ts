/** @module Test fixtures for the store tests: minimal hosts, secrets, firmware objects and events. */
import type { HostFirmwareSettings, HostUpdatePolicy } from '../../../agent/host/firmware-types.js';
import type { BareMetalHost, Secret } from '../../../agent/host/types.js';
import type { StoredEvent } from '../../../agent/store/index.js';

/** A minimal valid BareMetalHost named `name` whose BMC credentials are the secret `<name>-bmc`. */
export function makeHost(name: string, description = ''): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'default', uid: '', resourceVersion: '', generation: 1, creationTimestamp: '' },
    spec: {
      online: true,
      description,
      bmc: { address: 'redfish://192.0.2.10/redfish/v1/Systems/1', credentialsName: `${name}-bmc` },
    },
    status: {
      operationalStatus: '',
      errorMessage: '',
      errorCount: 0,
      hardwareProfile: '',
      poweredOn: false,
      goodCredentials: {},
      triedCredentials: {},
      operationHistory: {
        register: { start: '', end: '' },
        inspect: { start: '', end: '' },
        provision: { start: '', end: '' },
        deprovision: { start: '', end: '' },
      },
      provisioning: { state: '', ID: '', image: { url: '' } },
    },
  };
}

/** A Secret `namespace/name` holding `data` values base64-encoded, as Kubernetes stores them. */
export function makeSecret(name: string, plain: Record<string, string>, namespace = 'default'): Secret {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(plain)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    type: 'Opaque',
    data,
  };
}

/** A Normal event with the given reason, optionally about a host and/or MAC. */
export function makeEvent(reason: string, about: { host?: string; mac?: string } = {}): Omit<StoredEvent, 'seq'> {
  return { time: '2026-01-02T03:04:05Z', type: 'Normal', reason, message: `${reason} happened`, source: 'test', ...about };
}

/** A clock that starts at 2026-01-02T03:04:05Z and advances one second per call. */
export function steppingClock(): () => Date {
  let t = Date.UTC(2026, 0, 2, 3, 4, 5);
  return () => {
    const d = new Date(t);
    t += 1000;
    return d;
  };
}

/** A uid generator yielding `uid-1`, `uid-2`, … */
export function countingUids(): () => string {
  let n = 0;
  return () => `uid-${++n}`;
}

/** A HostFirmwareSettings for host `name` with the given desired settings (agent-written status empty). */
export function makeFirmwareSettings(name: string, settings: Record<string, string | number> = {}, namespace = 'default'): HostFirmwareSettings {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostFirmwareSettings',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 1, creationTimestamp: '' },
    spec: { settings },
    status: { settings: {} },
  };
}

/** A HostUpdatePolicy for host `name` allowing settings on reboot. */
export function makeUpdatePolicy(name: string, namespace = 'default'): HostUpdatePolicy {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostUpdatePolicy',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 1, creationTimestamp: '' },
    spec: { firmwareSettings: 'onReboot' },
  };
}
