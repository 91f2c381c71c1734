/**
 * @module The agent's answer to bootsvc's one boot question (`BootLookup`): {@link StoreBootLookup}
 * gives the {@link BootTarget} of each MAC, from which bootsvc's DHCP server derives the first-stage
 * file and boot HTTP/TFTP render the iPXE script or GRUB config, so they always agree. Hosts are
 * found by `spec.bootMACAddress` through the store snapshot's MAC index (store/host-mac-index.ts,
 * built once per snapshot and shared with the flight recorder); what each host boots, and its
 * ramdisk token, come from the provisioner's {@link BootIntentSource} (boot-intent.ts). A lookup
 * costs a map read plus one intent read.
 */
import type { BootLookup, BootTarget, BootTargetQuery, ClientArch } from '../../bootsvc/index.js';
import type { BareMetalHost } from '../host/types.js';
import { hostMacIndex, normalizeBootMac } from '../store/host-mac-index.js';
import type { Store } from '../store/types.js';
import type { BootIntentSource } from './boot-intent.js';
import { hostBootKind, hostBootTarget, type RamdiskDefaults } from './host-boot-plan.js';

/** Options of {@link StoreBootLookup}. */
export interface StoreBootLookupOptions {
  /** The hosts (their snapshot and its MAC index). */
  hosts: Pick<Store, 'hostSnapshot'>;
  /** The provisioner's boot intents and ramdisk tokens. */
  intents: BootIntentSource;
  /** Boot HTTP base URL (`http://<provisioning address>:<http port>`): the ramdisk's default agent URL. */
  httpBaseUrl: string;
  /** Ramdisk kernel, initrds, agent URL (default `httpBaseUrl`), extra params, consoles. */
  ramdisk: Omit<RamdiskDefaults, 'agentUrl'> & { agentUrl?: string };
}

/** BootLookup over the hosts and the provisioner's intents (see the module comment). */
export class StoreBootLookup implements BootLookup {
  private readonly options: StoreBootLookupOptions;
  private readonly defaults: RamdiskDefaults;
  /**
   * The DHCP client architecture each known host's MAC last sent (option 93): the iPXE script,
   * GRUB config and TFTP queries that follow carry none, and must name the same ramdisk.
   */
  private readonly dhcpArch = new Map<string, ClientArch>();

  constructor(options: StoreBootLookupOptions) {
    this.options = options;
    this.defaults = { ...options.ramdisk, agentUrl: options.ramdisk.agentUrl ?? options.httpBaseUrl };
  }

  /** The host whose bootMACAddress is `mac`, if any. */
  async hostForMac(mac: string): Promise<Readonly<BareMetalHost> | undefined> {
    return hostMacIndex(await this.options.hosts.hostSnapshot()).byMac.get(normalizeBootMac(mac));
  }

  /** {@inheritDoc BootLookup.target} A ramdisk boot gets the host's token (made once). */
  async target(q: BootTargetQuery): Promise<BootTarget | undefined> {
    const host = await this.hostForMac(q.mac);
    if (host === undefined) return undefined;
    const uid = host.metadata.uid;
    const mac = normalizeBootMac(q.mac);
    const intent = await this.options.intents.intent({ uid, mac, ...(q.arch === undefined ? {} : { arch: q.arch }) });
    if (hostBootKind(host, intent) === 'ramdisk' && intent.token === undefined) intent.token = await this.options.intents.ensureToken(uid);
    // Only MACs of known hosts are remembered: the map stays as small as the host list.
    const told = q.arch === undefined || q.arch === 'unknown' ? undefined : q.arch;
    if (told !== undefined) this.dhcpArch.set(mac, told);
    return hostBootTarget(host, intent, this.defaults, told ?? this.dhcpArch.get(mac));
  }
}

/** Creates a {@link StoreBootLookup}. */
export function createStoreBootLookup(options: StoreBootLookupOptions): StoreBootLookup {
  return new StoreBootLookup(options);
}
