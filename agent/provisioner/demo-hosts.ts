/**
 * @module The demo rack's sample hosts (demo.ts `DEMO_HOSTS`) and their BMC secret, applied by
 * the demo backend when it starts (backends.ts), once, into an empty store.
 */
import type { BareMetalHost } from '../host/types.js';
import { emptyHostStatus } from '../host/validation.js';
import type { Change, Store } from '../store/types.js';
import { DEMO_HOSTS } from './demo.js';

/** The demo rack's sample hosts and their BMC secret, applied once into an empty store. */
export async function seedDemoHosts(store: Pick<Store, 'listHosts' | 'commit'>): Promise<void> {
  if ((await store.listHosts()).length > 0) return;
  const changes: Change[] = [
    {
      kind: 'secret',
      op: 'put',
      ifVersion: 'absent',
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'demo-bmc-secret', namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        type: 'Opaque',
        data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
      },
    },
  ];
  DEMO_HOSTS.forEach((demo, i) => {
    const host: BareMetalHost = {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name: demo.name, namespace: 'default', uid: '', resourceVersion: '', generation: 1, creationTimestamp: '', annotations: { 'rackside.io/description': demo.description } },
      spec: {
        online: demo.withImage,
        bootMACAddress: `52:54:00:00:00:${(i + 1).toString(16).padStart(2, '0')}`,
        bmc: { address: `redfish+http://127.0.0.1:8000/redfish/v1/Systems/${demo.name}`, credentialsName: 'demo-bmc-secret' },
        ...(demo.withImage
          ? { image: { url: 'http://images.example/debian-12.qcow2', checksum: 'http://images.example/debian-12.qcow2.sha256sum', checksumType: 'sha256' as const, format: 'qcow2' as const } }
          : {}),
      },
      status: emptyHostStatus(),
    };
    changes.push({ kind: 'host', op: 'put', object: host, ifVersion: 'absent' });
  });
  await store.commit(changes);
}
