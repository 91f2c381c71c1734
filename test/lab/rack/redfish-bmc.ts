/**
 * @module A virtual Redfish BMC for one rack guest: the lab's Redfish server (plain HTTP) runs
 * in this process over a {@link QmpHostBackend} on the guest's QMP socket, wrapped to record
 * every call the "hardware" receives (power on with its boot target, reset, off). The agent runs
 * inside the rack namespace, so the BMC is published there through a unix socket: this module
 * listens on `<dir>/bmc.sock` and relays to the server's loopback port; the rack's namespace
 * relay listens on 127.0.0.1:PORT in the namespace and dials that socket (relay.ts).
 */
import { join } from 'node:path';
import type { HostBackend, HostBootTarget, HostPower } from '../redfish/backend.js';
import { QmpHostBackend } from '../redfish/qmp-backend.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../redfish/virtual-bmc.js';
import { GUEST_DEVICE_IDS } from './qemu-guest.js';
import { startRelay, type Relay, type RelaySpec } from './relay.js';

/** A host backend that records each call before passing it on. */
export class RecordingBackend implements HostBackend {
  /** Calls as `powerOn Pxe`, `reset Pxe`, `powerOff`, `shutdown`, `insertMedia URL`, `ejectMedia`. */
  readonly calls: string[] = [];
  constructor(private readonly inner: HostBackend) {}
  powerState(): Promise<HostPower> { return this.inner.powerState(); }
  powerOn(bootTarget: HostBootTarget): Promise<void> { this.calls.push(`powerOn ${bootTarget}`); return this.inner.powerOn(bootTarget); }
  powerOff(): Promise<void> { this.calls.push('powerOff'); return this.inner.powerOff(); }
  shutdown(): Promise<void> { this.calls.push('shutdown'); return this.inner.shutdown(); }
  reset(bootTarget: HostBootTarget): Promise<void> { this.calls.push(`reset ${bootTarget}`); return this.inner.reset(bootTarget); }
  insertMedia(url: string): Promise<void> { this.calls.push(`insertMedia ${url}`); return this.inner.insertMedia(url); }
  ejectMedia(): Promise<void> { this.calls.push('ejectMedia'); return this.inner.ejectMedia(); }
  close(): Promise<void> { return this.inner.close(); }
}

/** A running rack Redfish BMC. */
export interface RackRedfishBmc {
  /** The BareMetalHost BMC address as the agent (inside the namespace) uses it. */
  address: string;
  username: string;
  password: string;
  server: VirtualRedfishBmc;
  backend: RecordingBackend;
  /** What the namespace relay must listen on and dial. */
  nsRelay: RelaySpec;
  stop(): Promise<void>;
}

/** Options of {@link startRackRedfishBmc}. */
export interface RackRedfishBmcOptions {
  /** Scratch directory of this BMC (holds its unix socket). */
  dir: string;
  /** The guest's QMP socket for the BMC. */
  qmpSocket: string;
  /** Port on 127.0.0.1 inside the namespace. */
  nsPort: number;
  username?: string;
  password?: string;
  /** The guest has a CD drive: address scheme `redfish-virtualmedia+http` and the CD in the boot order. */
  virtualMedia?: boolean;
  /** How the BMC fetches virtual media (the guest's network is the rack namespace, not this process's). */
  download?: (url: string, file: string) => Promise<void>;
}

/** Starts the BMC and its unix-socket side; the caller adds `nsRelay` to the namespace relay. */
export async function startRackRedfishBmc(options: RackRedfishBmcOptions): Promise<RackRedfishBmc> {
  const username = options.username ?? 'admin';
  const password = options.password ?? 'password';
  const backend = new RecordingBackend(new QmpHostBackend({
    socketPath: options.qmpSocket,
    bootDevices: { Hdd: GUEST_DEVICE_IDS.firstDisk, Pxe: GUEST_DEVICE_IDS.nic, ...(options.virtualMedia === true ? { Cd: GUEST_DEVICE_IDS.cd } : {}) },
    cdDeviceId: GUEST_DEVICE_IDS.cd,
    mediaDir: join(options.dir, 'media'),
    ...(options.download === undefined ? {} : { download: options.download }),
  }));
  const server = await startVirtualRedfishBmc({ https: false, host: '127.0.0.1', port: 0, username, password, backend: () => backend });
  const port = Number(server.host.split(':').pop());
  const socketPath = join(options.dir, 'bmc.sock');
  let relay: Relay;
  try {
    relay = await startRelay({ listen: { kind: 'unix', path: socketPath }, target: { kind: 'tcp', host: '127.0.0.1', port } });
  } catch (err) {
    await server.stop();
    throw err;
  }
  return {
    address: `${options.virtualMedia === true ? 'redfish-virtualmedia' : 'redfish'}+http://127.0.0.1:${options.nsPort}/redfish/v1/Systems/1`,
    username,
    password,
    server,
    backend,
    nsRelay: { listen: { kind: 'tcp', host: '127.0.0.1', port: options.nsPort }, target: { kind: 'unix', path: socketPath } },
    stop: async () => {
      await relay.close();
      await server.stop(); // also closes the backend's QMP connection
    },
  };
}
