/**
 * @module The per-driver Redfish context every capability file shares: the client, the vendor
 * quirks, and System/Manager resolution — the System from the address path
 * (`resolveRedfishTarget`, BMO `redfish_system_id`), else the single member of
 * `/redfish/v1/Systems` (several members without a path is an error that says how to choose);
 * the Manager from the System's `Links.ManagedBy`, else the single (or first) Manager.
 */
import { resolveRedfishTarget, type BmcAddress } from '../bmc-address.js';
import type { CapabilityName } from '../capabilities.js';
import { UnsupportedCapabilityError } from '../errors.js';
import type { RedfishClient, RedfishResponse } from './client.js';
import { decodeCollection, normalizeUri, redfishProtocolError, type DecodeContext } from './json.js';
import { decodeComputerSystem, type ComputerSystem, type ServiceRoot } from './resources.js';
import type { RedfishQuirks, VendorHookContext } from './vendors/quirks.js';

/** A resource as read, with the ETag to PATCH it. */
export interface Fetched<T> {
  readonly value: T;
  readonly etag: string | undefined;
  readonly path: string;
}

/** Shared state of one Redfish driver instance. */
export class RedfishContext implements VendorHookContext {
  readonly client: RedfishClient;
  readonly address: string;
  readonly quirks: RedfishQuirks;
  readonly #systemId: string | undefined;
  #systemUri: Promise<string> | undefined;
  #managerUri: Promise<string> | undefined;

  constructor(address: BmcAddress, client: RedfishClient, quirks: RedfishQuirks) {
    this.client = client;
    this.address = address.raw;
    this.quirks = quirks;
    this.#systemId = resolveRedfishTarget(address).systemId;
  }

  /** Decode context for `uri`. */
  at(uri: string): DecodeContext {
    return { address: this.address, uri };
  }

  /** An `UnsupportedCapabilityError` for this BMC. */
  unsupported(capability: CapabilityName, operation: string, why?: string): UnsupportedCapabilityError {
    const err = new UnsupportedCapabilityError(capability, operation, { address: this.address, driver: 'redfish' });
    if (why !== undefined) err.message = `${err.message}: ${why}`;
    return err;
  }

  /** The service root (cached by the client). */
  root(): Promise<ServiceRoot> {
    return this.client.serviceRoot();
  }

  /** GETs `path` and decodes it. */
  async fetch<T>(path: string, decode: (body: unknown, ctx: DecodeContext) => T): Promise<Fetched<T>> {
    const res: RedfishResponse = await this.client.get(path);
    return { value: decode(res.body, this.at(res.path)), etag: res.etag, path };
  }

  /** Member paths of the collection at `path`. */
  async members(path: string): Promise<string[]> {
    return (await this.fetch(path, decodeCollection)).value;
  }

  /** Path of the System this driver controls (resolved once). */
  systemUri(): Promise<string> {
    this.#systemUri ??= this.#resolveSystem();
    this.#systemUri.catch(() => { this.#systemUri = undefined; });
    return this.#systemUri;
  }

  async #resolveSystem(): Promise<string> {
    const root = await this.root();
    const id = this.#systemId;
    if (id !== undefined && id !== '') {
      if (id.startsWith('/')) return normalizeUri(id);
      if (root.systems === undefined) throw redfishProtocolError(this.at('/redfish/v1'), 'service root has no "Systems" link');
      return `${normalizeUri(root.systems)}/${id}`;
    }
    if (root.systems === undefined) throw redfishProtocolError(this.at('/redfish/v1'), 'service root has no "Systems" link');
    const systems = await this.members(root.systems);
    const [only] = systems;
    if (only === undefined) throw redfishProtocolError(this.at(root.systems), 'the BMC reports no systems');
    if (systems.length > 1) {
      const shown = systems.slice(0, 5).join(', ');
      throw redfishProtocolError(this.at(root.systems),
        `the BMC manages ${systems.length} systems (${shown}${systems.length > 5 ? ', …' : ''}); put the system path in the BMC address, `
        + `e.g. redfish://${this.address.replace(/^[a-z0-9+-]+:\/\//i, '').split('/')[0] ?? 'host'}${only}`);
    }
    return normalizeUri(only);
  }

  /** Reads the System (fresh, with its ETag). */
  async system(): Promise<Fetched<ComputerSystem>> {
    return this.fetch(await this.systemUri(), decodeComputerSystem);
  }

  /** Path of the Manager of the System (resolved once). */
  managerUri(): Promise<string> {
    this.#managerUri ??= (async () => {
      const { value: system } = await this.system();
      const [managedBy] = system.links.managedBy;
      if (managedBy !== undefined) return normalizeUri(managedBy);
      const root = await this.root();
      if (root.managers === undefined) throw this.unsupported('virtualMedia', 'managerUri', 'the BMC lists no Managers');
      const [first] = await this.members(root.managers);
      if (first === undefined) throw redfishProtocolError(this.at(root.managers), 'the BMC reports no managers');
      return normalizeUri(first);
    })();
    this.#managerUri.catch(() => { this.#managerUri = undefined; });
    return this.#managerUri;
  }
}
