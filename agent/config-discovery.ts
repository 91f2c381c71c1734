/**
 * @module Decoding the `discovery` section of the config (agent/config.ts): what rackside does
 * with hosts it discovers under `dhcp.unknownHosts: discover` (docs/discovery.md). The section
 * does something only with discovery on, so it is an error beside `dhcp.unknownHosts: ignore`
 * (a setting that would do nothing is never silence).
 * @pure
 */
import type { ConfigReader } from './config-decode.js';

/** The decoded `discovery` section; every field has its default. */
export interface DiscoveryConfig {
  /**
   * `auto`: a host whose ramdisk made an in-band BMC user goes on to registering at once;
   * `manual`: it waits in `unmanaged` with its proposed BMC until `rackside enroll NAME`.
   */
  approve: 'auto' | 'manual';
  /** Create a rackside BMC user in-band (over `/dev/ipmi0`) from the discovery ramdisk. */
  enrollBMC: boolean;
  /** MACs handed a discovery boot and not yet reported, at most (more are refused and counted). */
  maxPending: number;
  /** Discovered hosts still `unmanaged` in the store, at most (more are refused and counted). */
  maxHosts: number;
  /** Life of a discovery token (one per MAC, handed out with the discovery boot). */
  tokenTtlSeconds: number;
  /** Namespace of discovered hosts and their BMC Secrets. */
  namespace: string;
}

/** The defaults of {@link DiscoveryConfig}. */
export const DISCOVERY_DEFAULTS: Readonly<DiscoveryConfig> = {
  approve: 'auto', enrollBMC: false, maxPending: 32, maxHosts: 256, tokenTtlSeconds: 1800, namespace: 'default',
};

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Decodes the `discovery` section (absent: the defaults). `unknownHosts` is the decoded
 * `dhcp.unknownHosts`: a present section beside `ignore` is reported as a problem.
 */
export function decodeDiscovery(r: ConfigReader, value: unknown, unknownHosts: 'ignore' | 'discover'): DiscoveryConfig {
  const d = r.mapping('discovery', value, ['approve', 'enrollBMC', 'maxPending', 'maxHosts', 'tokenTtlSeconds', 'namespace']);
  if (value !== undefined && value !== null && unknownHosts !== 'discover') {
    r.report('discovery', 'no discovery section unless dhcp.unknownHosts is discover (it would do nothing)', 'a discovery section');
  }
  let enrollBMC = DISCOVERY_DEFAULTS.enrollBMC;
  if (typeof d.enrollBMC === 'boolean') enrollBMC = d.enrollBMC;
  else if (d.enrollBMC !== undefined) r.report('discovery.enrollBMC', 'true or false', d.enrollBMC);
  return {
    approve: r.oneOf('discovery.approve', d.approve, ['auto', 'manual'], DISCOVERY_DEFAULTS.approve),
    enrollBMC,
    maxPending: r.integer('discovery.maxPending', d.maxPending, DISCOVERY_DEFAULTS.maxPending, 1, 4096),
    maxHosts: r.integer('discovery.maxHosts', d.maxHosts, DISCOVERY_DEFAULTS.maxHosts, 1, 100_000),
    tokenTtlSeconds: r.integer('discovery.tokenTtlSeconds', d.tokenTtlSeconds, DISCOVERY_DEFAULTS.tokenTtlSeconds, 60, 86_400),
    namespace: r.matching('discovery.namespace', d.namespace, NAMESPACE, 'a DNS-1123 label (lower-case letters, digits, "-", max 63)') ?? DISCOVERY_DEFAULTS.namespace,
  };
}
