/**
 * @module Resets a rack guest into a chosen boot order over one QMP connection: `bootindex` of the
 * NIC and the first disk cleared, then set (values must stay unique, so all are cleared first),
 * then `system_reset` — QEMU rebuilds the firmware's boot order at reset. Runnable as
 * `node qmp-reset.js SOCKET pxe|disk` (the IPMI chassis control's reset, see ipmi-bmc.ts): one
 * process instead of one per QMP command, so the IPMI request is answered before ipmitool or
 * rackside's driver retransmits it (a retransmitted reset would reset the guest twice).
 */
import { pathToFileURL } from 'node:url';
import { QmpClient } from '../redfish/qmp-backend.js';
import { GUEST_DEVICE_IDS } from './qemu-guest.js';

/** Sets the boot order (`pxe`: NIC first, else the first disk) and resets the guest. */
export async function resetIntoBootOrder(socketPath: string, first: 'pxe' | 'disk'): Promise<void> {
  const client = await QmpClient.connect(socketPath, 5000);
  try {
    const order = first === 'pxe' ? [GUEST_DEVICE_IDS.nic, GUEST_DEVICE_IDS.firstDisk] : [GUEST_DEVICE_IDS.firstDisk, GUEST_DEVICE_IDS.nic];
    for (const id of order) {
      // A guest without disks has no disk0: ignore the missing device.
      await client.execute('qom-set', { path: `/machine/peripheral/${id}`, property: 'bootindex', value: -1 }).catch(() => undefined);
    }
    for (const [index, id] of order.entries()) {
      await client.execute('qom-set', { path: `/machine/peripheral/${id}`, property: 'bootindex', value: index }).catch(() => undefined);
    }
    await client.execute('system_reset');
  } finally {
    client.close();
  }
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) {
  const [socketPath, first] = process.argv.slice(2);
  if (socketPath === undefined || (first !== 'pxe' && first !== 'disk')) {
    process.stderr.write('usage: qmp-reset.js SOCKET pxe|disk\n');
    process.exitCode = 2;
  } else {
    resetIntoBootOrder(socketPath, first).then(
      () => { process.stdout.write('{}\n'); },
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 1;
      },
    );
  }
}
