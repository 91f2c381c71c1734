/** @module Fixtures for the sync tests: a fully populated host (hardware, history, image, secrets referenced). */
import type { BareMetalHost } from '../../../agent/host/types.js';
import { makeHost } from '../store/fixtures.js';

/** A provisioned host with hardware, operation history, an image URL with credentials and userData. */
export function richHost(name: string): BareMetalHost {
  const host = makeHost(name, 'rack 1 slot 3');
  host.metadata.uid = `uid-${name}`;
  host.metadata.resourceVersion = '17';
  host.spec.userData = { name: `${name}-user-data` };
  host.spec.networkData = { name: `${name}-network-data` };
  host.spec.image = { url: 'https://user:s3cret@images.example/os.qcow2?X-Amz-Signature=abc#frag', checksum: 'sha256:00' };
  host.status.operationalStatus = 'OK';
  host.status.poweredOn = true;
  host.status.provisioning = { state: 'provisioned', ID: 'node-id', image: { url: 'https://user:s3cret@images.example/os.qcow2?X-Amz-Signature=abc#frag' } };
  host.status.goodCredentials = { credentials: { name: `${name}-bmc`, namespace: 'default' }, credentialsVersion: '3' };
  host.status.lastUpdated = '2026-01-02T03:30:00Z';
  host.status.operationHistory = {
    register: { start: '2026-01-02T03:00:00Z', end: '2026-01-02T03:00:05Z' },
    inspect: { start: '2026-01-02T03:01:00Z', end: '2026-01-02T03:05:00Z' },
    provision: { start: '2026-01-02T03:10:00Z', end: '2026-01-02T03:21:30.500Z' },
    deprovision: { start: '', end: '' },
  };
  host.status.hardware = {
    systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', serialNumber: 'SN123' },
    firmware: { bios: { version: '1.2.3' } },
    ramMebibytes: 131072,
    cpu: { arch: 'x86_64', count: 32, model: 'Xeon' },
    nics: [{ name: 'eno1', mac: '52:54:00:00:00:01', ip: '192.0.2.11' }, { name: 'eno2', mac: '52:54:00:00:00:02' }],
    storage: [{ name: '/dev/sda', sizeBytes: 480_000_000_000 }, { name: '/dev/nvme0n1', sizeBytes: 3_840_000_000_000 }],
  };
  return host;
}
