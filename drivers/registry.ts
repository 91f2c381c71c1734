/**
 * @module The driver registry: address type (`ipmi`, `redfish`, `fake`) → driver factory, as
 * metal3's `RegisterFactory` maps schemes, but explicit — nothing registers itself on import;
 * agent/main.ts calls `registerBuiltinDrivers` (builtin-drivers.ts). `create` returns a
 * {@link BmcDriver} exposing every capability: what the driver lacks is filled with the noop.
 */
import { bmcCapabilities, parseBmcAddress, type BmcAddress } from './bmc-address.js';
import type { BmcCapabilities, BmcDriverType } from './bmc-schemes.js';
import { CAPABILITY_NAMES, type BmcCapabilitySet, type CapabilityName } from './capabilities.js';
import { BmcError, BmcErrorCode } from './errors.js';
import type { HostLookup } from './host-lookup.js';
import { createNoopCapabilities } from './noop.js';

/** BMC login (from the host's BMC secret). Never logged, never put in errors. */
export interface BmcCredentials {
  readonly username: string;
  readonly password: string;
}

/** Per-host driver options (metal3 `disableCertificateVerification` and rackside limits). */
export interface DriverOptions {
  /** Skip TLS certificate verification for this BMC (metal3 BMC details field). */
  readonly disableCertificateVerification?: boolean;
  /** Upper bound for one BMC request, in milliseconds (driver default when undefined). */
  readonly timeoutMs?: number;
  /**
   * IPMI only (other drivers ignore it): pins the RMCP+ cipher suite of this host, like Ironic's
   * `ipmi_cipher_suite` — `17` or `3` (a number or its decimal text, e.g. an annotation's value;
   * `"17,3"` allows both in that order). The driver then proposes and accepts only that suite,
   * whatever the BMC lists or answers. Undefined: the driver's default (17, then 3, or the
   * IPMI factory's `cipherSuites`). 0 and every other suite are refused when the driver is built
   * (`BmcError` `RACKSIDE_ERR_BMC_UNSUPPORTED`, permanent).
   */
  readonly ipmiCipherSuite?: number | string;
  /** Resolver for the BMC's host name (tests inject one); default the system's (host-lookup.ts). */
  readonly lookup?: HostLookup;
}

/** What a factory returns: the capabilities it implements, and an optional cleanup. */
export type DriverImplementation = Partial<BmcCapabilitySet> & {
  /** Releases sessions and sockets (Redfish logout, IPMI Close Session). Idempotent. */
  readonly close?: () => Promise<void>;
};

/** Builds a driver for one BMC. Must not do I/O: connections open lazily on first use. */
export type DriverFactory = (address: BmcAddress, credentials: BmcCredentials, options: DriverOptions) => DriverImplementation;

/** A driver for one BMC: every capability present, unsupported ones rejecting with `UnsupportedCapabilityError`. */
export interface BmcDriver extends BmcCapabilitySet {
  readonly address: BmcAddress;
  /** Registry key the driver came from. */
  readonly type: BmcDriverType;
  /** What the address's scheme promises (metal3 capability matrix). */
  readonly schemeCapabilities: BmcCapabilities;
  /** Capabilities the driver implements, in {@link CAPABILITY_NAMES} order. */
  readonly supported: readonly CapabilityName[];
  /** True when `name` is implemented (not the noop). */
  supports(name: CapabilityName): boolean;
  /** Releases the driver's sessions; safe to call more than once. */
  close(): Promise<void>;
}

/** Options of {@link DriverRegistry.register}. */
export interface RegisterOptions {
  /** Replace an existing factory (tests and the demo put the fake under `redfish`/`ipmi`). */
  readonly replace?: boolean;
}

/** Maps driver types to factories and builds drivers for addresses. */
export class DriverRegistry {
  readonly #factories = new Map<BmcDriverType, DriverFactory>();

  /** Registers `factory` for `type`; a second registration throws unless `replace` is set. */
  register(type: BmcDriverType, factory: DriverFactory, options: RegisterOptions = {}): void {
    if (this.#factories.has(type) && options.replace !== true) {
      throw new Error(`a BMC driver for type '${type}' is already registered`);
    }
    this.#factories.set(type, factory);
  }

  /** True when a factory is registered for `type`. */
  has(type: BmcDriverType): boolean {
    return this.#factories.has(type);
  }

  /** Registered types, in registration order. */
  types(): BmcDriverType[] {
    return [...this.#factories.keys()];
  }

  /**
   * Builds the driver for `address` (a string is parsed first and may throw `BmcAddressError`);
   * throws `BmcError` `RACKSIDE_ERR_BMC_NO_DRIVER` when no factory serves its type. No I/O.
   */
  create(address: BmcAddress | string, credentials: BmcCredentials, options: DriverOptions = {}): BmcDriver {
    const parsed = typeof address === 'string' ? parseBmcAddress(address) : address;
    const factory = this.#factories.get(parsed.type);
    if (factory === undefined) {
      const known = this.types().join(', ') || 'none';
      throw new BmcError(BmcErrorCode.noDriver,
        `no BMC driver registered for type '${parsed.type}' (scheme ${parsed.scheme}); registered: ${known}`,
        { address: parsed.raw });
    }
    return assembleDriver(parsed, factory(parsed, credentials, options));
  }
}

/** Completes an implementation with noops and the bookkeeping fields of {@link BmcDriver}. */
export function assembleDriver(address: BmcAddress, implementation: DriverImplementation): BmcDriver {
  const noop = createNoopCapabilities({ address: address.raw, driver: address.type });
  const supported = CAPABILITY_NAMES.filter((name) => implementation[name] !== undefined);
  const close = implementation.close;
  let closing: Promise<void> | undefined;
  return {
    address,
    type: address.type,
    schemeCapabilities: bmcCapabilities(address),
    supported,
    supports: (name) => supported.includes(name),
    close: () => (closing ??= close === undefined ? Promise.resolve() : close()),
    power: implementation.power ?? noop.power,
    bootDevice: implementation.bootDevice ?? noop.bootDevice,
    virtualMedia: implementation.virtualMedia ?? noop.virtualMedia,
    biosSettings: implementation.biosSettings ?? noop.biosSettings,
    firmware: implementation.firmware ?? noop.firmware,
    tasks: implementation.tasks ?? noop.tasks,
    raid: implementation.raid ?? noop.raid,
    eventSubscriptions: implementation.eventSubscriptions ?? noop.eventSubscriptions,
    secureBoot: implementation.secureBoot ?? noop.secureBoot,
    inventory: implementation.inventory ?? noop.inventory,
    info: implementation.info ?? noop.info,
  };
}
