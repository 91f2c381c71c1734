/**
 * @module The agent's answer to bootsvc's two boot questions, from the hosts in the store:
 * {@link StoreBootLookup} implements `BootLookup` (DHCP: which first-stage file, via bootsvc's
 * `decideBoot` matrix) and `BootPlanSource` (boot HTTP/TFTP: what the iPXE script or GRUB config
 * says), both from one {@link BootTarget} per MAC, so they always agree. Hosts are found by
 * `spec.bootMACAddress` through the store snapshot's MAC index (store/host-mac-index.ts, built
 * once per snapshot and shared with the flight recorder); a lookup costs a map read plus one
 * `nodes` get.
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
import { hostMacIndex, normalizeBootMac } from '../store/host-mac-index.js';
import type { Store } from '../store/types.js';
import { decodeRamdiskIntent, hostBootKind, hostBootTarget, type RamdiskDefaults } from './host-boot-plan.js';
import { ensureRamdiskToken, type RandomBytes } from './ramdisk-token.js';

/** Where a host's ramdisk callback token comes from (the local provisioner's NodeTable, the table every token is written through). */
export interface RamdiskTokens {
  /** Host `uid`'s token, created and stored when it has none; concurrent calls get one token. */
  ensureToken(uid: string): Promise<string>;
}

/** Options of {@link StoreBootLookup}. */
export interface StoreBootLookupOptions {
  store: Pick<Store, 'hostSnapshot' | 'nodes'>;
  /** Boot HTTP base URL (`http://<provisioning address>:<http port>`), for script and HTTP-boot URLs. */
  httpBaseUrl: string;
  /** Ramdisk kernel, initrds, agent URL (default `httpBaseUrl`), extra params, consoles. */
  ramdisk: Omit<RamdiskDefaults, 'agentUrl'> & { agentUrl?: string };
  uefiLoader?: UefiIpxeLoader;
  /**
   * Creates the tokens ramdisk boots need. Give the table the ramdisk API looks tokens up in, so
   * every token is written through it; without one, tokens are merged into `store.nodes` here.
   */
  tokens?: RamdiskTokens;
  /** Random source of tokens created here (without `tokens`). */
  random?: RandomBytes;
}

/** BootLookup + BootPlanSource over the store (see the module comment). */
export class StoreBootLookup implements BootLookup, BootPlanSource {
  private readonly options: StoreBootLookupOptions;
  private readonly defaults: RamdiskDefaults;
  private readonly tokenLocks = new Map<string, Promise<string>>();

  constructor(options: StoreBootLookupOptions) {
    this.options = options;
    this.defaults = { ...options.ramdisk, agentUrl: options.ramdisk.agentUrl ?? options.httpBaseUrl };
  }

  /** The host whose bootMACAddress is `mac`, if any. */
  async hostForMac(mac: string): Promise<Readonly<BareMetalHost> | undefined> {
    return hostMacIndex(await this.options.store.hostSnapshot()).byMac.get(normalizeBootMac(mac));
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

  /** The host's token, creating it once even under concurrent lookups. */
  private token(uid: string): Promise<string> {
    if (this.options.tokens !== undefined) return this.options.tokens.ensureToken(uid);
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
