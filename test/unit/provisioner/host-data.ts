/**
 * @module Test helpers for provisioner tests: HostData and the per-method data objects with
 * sensible defaults, and an event recorder.
 */
import type {
  EventPublisher,
  HostData,
  InspectData,
  ManagementAccessData,
  PrepareData,
  ProvisionData,
  ServicingData,
} from '../../../agent/provisioner/index.js';

/** HostData for a host called `name` (uid `uid-<name>` unless given). */
export function hostData(name: string, overrides: Partial<HostData> & { uid?: string } = {}): HostData {
  const { uid, ...rest } = overrides;
  return {
    objectMeta: { name, namespace: 'metal3', uid: uid ?? `uid-${name}`, annotations: {}, labels: {} },
    bmcAddress: 'redfish+http://192.168.111.1:8000/redfish/v1/Systems/1',
    bmcCredentials: { username: 'admin', password: 'password' },
    disableCertificateVerification: false,
    bootMACAddress: '00:5c:52:31:3a:9c',
    provisionerID: '',
    ...rest,
  };
}

/** Registration data in state `registering`. */
export function accessData(overrides: Partial<ManagementAccessData> = {}): ManagementAccessData {
  return {
    bootMode: 'UEFI',
    automatedCleaningMode: 'metadata',
    state: 'registering',
    operationalStatus: 'OK',
    preprovisioningNetworkData: '',
    hasCustomDeploy: false,
    disablePowerOff: false,
    cpuArchitecture: 'x86_64',
    disableInspection: false,
    inspectionMode: 'agent',
    ...overrides,
  };
}

/** Inspection data. */
export const inspectData: InspectData = { bootMode: 'UEFI', cpuArchitecture: 'x86_64', inspectionMode: 'agent' };

/** Preparation data with nothing to apply. */
export const prepareData: PrepareData = { targetFirmwareSettings: {}, actualFirmwareSettings: {}, targetFirmwareComponents: [] };

/** Servicing data with nothing to apply. */
export const servicingData: ServicingData = { targetFirmwareSettings: {}, actualFirmwareSettings: {}, targetFirmwareComponents: [], hasFirmwareSpec: false };

/** Provision data for an image URL (or a custom deploy method). */
export function provisionData(url: string, customDeployMethod?: string): ProvisionData {
  const data: ProvisionData = {
    image: { url, checksum: 'http://images.example/SHA256SUMS', checksumType: 'sha256', format: 'qcow2' },
    hostConfig: {
      userData: () => Promise.resolve('#cloud-config\n'),
      networkData: () => Promise.resolve(''),
      metaData: () => Promise.resolve(''),
    },
    bootMode: 'UEFI',
    hardwareProfile: 'unknown',
    cpuArchitecture: 'x86_64',
  };
  if (customDeployMethod !== undefined) data.customDeploy = { method: customDeployMethod };
  return data;
}

/** An EventPublisher that records `reason: message` strings. */
export function eventRecorder(): { publish: EventPublisher; events: string[] } {
  const events: string[] = [];
  return { publish: (reason, message) => { events.push(`${reason}: ${message}`); }, events };
}
