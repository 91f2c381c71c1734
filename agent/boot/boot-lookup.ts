/**
 * @module The agent's answer to bootsvc's two boot questions, from the hosts in the store:
 * {@link StoreBootLookup} implements `BootLookup` (DHCP: which first-stage file, via bootsvc's
 * `decideBoot` matrix) and `BootPlanSource` (boot HTTP/TFTP: what the iPXE script or GRUB config
 * says), both from one {@link BootTarget} per MAC, so they always agree. Hosts are indexed by
 * `spec.bootMACAddress` (lower-cased) and the index is rebuilt lazily after any host commit;
 * a lookup costs a map read plus one `nodes` get.
 */
import {
  decideBoot,
  type BootDecision,
  type BootLookup,
  type BootPlanSource,
  type BootQuery,
  type BootTarget,
  type UefiIpxeLoader,
} from '../../bootsvc/index.js';
import type { BareMetalHost } from '../host/types.js';
import type { Store } from '../store/types.js';
import { decodeRamdiskIntent, hostBootKind, hostBootTarget, type RamdiskDefaults } from './host-boot-plan.js';
import { ensureRamdiskToken, type RandomBytes } from './ramdisk-token.js';

/** Options of {@link StoreBootLookup}. */
export interface StoreBootLookupOptions {
  store: Pick<Store, 'hostSnapshot' | 'onChange' | 'nodes'>;
  /** Boot HTTP base URL (`http://<provisioning address>:<http port>`), for script and HTTP-boot URLs. */
  httpBaseUrl: string;
  /** Ramdisk kernel, initrds, agent URL (default `httpBaseUrl`), extra params, consoles. */
  ramdisk: Omit<RamdiskDefaults, 'agentUrl'> & { agentUrl?: string };
  uefiLoader?: UefiIpxeLoader;
  random?: RandomBytes;
}

function normalizeMac(mac: string): string {
  return mac.trim().toLowerCase().replaceAll('-', ':');
}

/** BootLookup + BootPlanSource over the store (see the module comment). Call `close()` to unsubscribe. */
export class StoreBootLookup implements BootLookup, BootPlanSource {
  private readonly options: StoreBootLookupOptions;
  private readonly defaults: RamdiskDefaults;
  private index: Promise<Map<string, Readonly<BareMetalHost>>> | undefined;
  private readonly unsubscribe: () => void;
  private readonly tokenLocks = new Map<string, Promise<string>>();

  constructor(options: StoreBootLookupOptions) {
    this.options = options;
    this.defaults = { ...options.ramdisk, agentUrl: options.ramdisk.agentUrl ?? options.httpBaseUrl };
    this.unsubscribe = options.store.onChange((notice) => {
      if (notice.kind === 'host') this.index = undefined;
    });
  }

  /** The host whose bootMACAddress is `mac`, if any. */
  async hostForMac(mac: string): Promise<Readonly<BareMetalHost> | undefined> {
    this.index ??= this.buildIndex();
    const index = this.index;
    try {
      return (await index).get(normalizeMac(mac));
    } catch (err) {
      if (this.index === index) this.index = undefined;
      throw err;
    }
  }

  /** {@inheritDoc BootPlanSource.target} */
  async target(mac: string): Promise<BootTarget | undefined> {
    const host = await this.hostForMac(mac);
    if (host === undefined) return undefined;
    const uid = host.metadata.uid;
    const intent = decodeRamdiskIntent(await this.options.store.nodes.get(uid));
    if (hostBootKind(host, intent) === 'ramdisk' && intent.token === undefined) intent.token = await this.token(uid);
    return hostBootTarget(host, intent, this.defaults);
  }

  /** {@inheritDoc BootLookup.lookup} */
  async lookup(q: BootQuery): Promise<BootDecision | undefined> {
    const options = { httpBaseUrl: this.options.httpBaseUrl, ...(this.options.uefiLoader === undefined ? {} : { uefiLoader: this.options.uefiLoader }) };
    return decideBoot(await this.target(q.mac), q, options);
  }

  /** Stops following store changes. */
  close(): void {
    this.unsubscribe();
  }

  private async buildIndex(): Promise<Map<string, Readonly<BareMetalHost>>> {
    const index = new Map<string, Readonly<BareMetalHost>>();
    for (const host of await this.options.store.hostSnapshot()) {
      const mac = host.spec.bootMACAddress;
      if (mac !== undefined && mac !== '') index.set(normalizeMac(mac), host);
    }
    return index;
  }

  /** The host's token, creating it once even under concurrent lookups. */
  private token(uid: string): Promise<string> {
    const pending = this.tokenLocks.get(uid);
    if (pending !== undefined) return pending;
    const created = ensureRamdiskToken(this.options.store.nodes, uid, this.options.random).finally(() => {
      this.tokenLocks.delete(uid);
    });
    this.tokenLocks.set(uid, created);
    return created;
  }
}

/** Creates a {@link StoreBootLookup}. */
export function createStoreBootLookup(options: StoreBootLookupOptions): StoreBootLookup {
  return new StoreBootLookup(options);
}
