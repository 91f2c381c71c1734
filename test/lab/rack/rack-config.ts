/**
 * @module What the virtual rack tells rackside: the agent's YAML config (local provisioner,
 * DHCP `full` on the rack bridge, boot HTTP on the bridge address, the management API on the
 * namespace's loopback) and the metal3 manifests of each guest (a BareMetalHost and its BMC
 * Secret, as a metal3 user writes them). The addresses live in the rack's own namespace, so
 * they are the same for every run.
 * @pure
 */
import type { RackHostSpec } from './qemu-guest.js';

/** The rack's provisioning network (inside its namespace). */
export const RACK_NETWORK = {
  agentAddress: '10.250.0.1',
  prefixLength: 24,
  dhcpRange: '10.250.0.100-10.250.0.199',
  httpPort: 8081,
  managementPort: 8080,
} as const;

/** The rack's IPv6 provisioning prefix (the `ipv6` and `dual` networks of {@link renderAgentConfig}). */
export const RACK_NETWORK6 = {
  agentAddress: 'fd00:250::1',
  prefixLength: 64,
  dhcpRange: 'fd00:250::100-fd00:250::1ff',
} as const;

/** The bridge addresses (CIDR) of a rack network family. */
export function rackAddresses(network: 'ipv4' | 'ipv6' | 'dual' = 'ipv4'): string[] {
  const v4 = `${RACK_NETWORK.agentAddress}/${RACK_NETWORK.prefixLength}`;
  const v6 = `${RACK_NETWORK6.agentAddress}/${RACK_NETWORK6.prefixLength}`;
  return network === 'ipv4' ? [v4] : network === 'ipv6' ? [v6] : [v4, v6];
}

/** Inputs of {@link renderAgentConfig}. */
export interface RackAgentConfigInput {
  stateDir: string;
  /** `images.cacheDir`; the ramdisk is in `<cacheDir>/ramdisk/`. */
  cacheDir: string;
  logLevel: 'debug' | 'info' | 'warn';
  /** `agent.id` and the lab named in the file's first comment; default the virtual rack's. */
  lab?: { id: string; source: string };
  /** `tftp.root`, when the lab serves its own first stages. */
  tftpRoot?: string;
  /**
   * `images.ramdisk.kernelParams`; default `no_timer_check rackside.lldp_seconds=0` (below: the rack's
   * bridge has no LLDP speaker unless a test adds one, so inspections do not wait 30 s for one), null for none.
   */
  ramdiskKernelParams?: string | null;
  /**
   * The provisioning network (default `ipv4`): `ipv6` is IPv6-only (DHCPv6 and rackside's router
   * advertisements, no DHCPv4, boot HTTP and TFTP on `::`), `dual` both.
   */
  network?: 'ipv4' | 'ipv6' | 'dual';
}

/** The provisioning, DHCP and listen lines of `network`. */
function networkLines(network: 'ipv4' | 'ipv6' | 'dual'): string[] {
  const n = RACK_NETWORK;
  const n6 = RACK_NETWORK6;
  const dhcp = ['dhcp:', '  mode: full', `  range: ${n.dhcpRange}`, '  leaseSeconds: 600'];
  const dhcp6 = ['dhcp6:', '  mode: full', `  range: ${n6.dhcpRange}`, '  leaseSeconds: 600', '  routerAdvertisements: on'];
  if (network === 'ipv4') {
    return ['provisioning:', '  interface: br0', `  address: ${n.agentAddress}/${n.prefixLength}`, ...dhcp, 'http:', `  listen: ${n.agentAddress}:${n.httpPort}`, 'tftp:', `  listen: ${n.agentAddress}:69`];
  }
  return [
    'provisioning:', '  interface: br0', `  address: [${rackAddresses(network).join(', ')}]`,
    ...(network === 'dual' ? dhcp : []), ...dhcp6,
    'http:', `  listen: "[::]:${n.httpPort}"`, 'tftp:', '  listen: "[::]:69"',
  ];
}

/** The agent's config file text (the virtual rack's, and the firmware lab's on the same network). */
export function renderAgentConfig(input: RackAgentConfigInput): string {
  const n = RACK_NETWORK;
  const lab = input.lab ?? { id: 'virtual-rack', source: 'test/lab/virtual-rack.ts' };
  // TCG guests on an overloaded 2-core CI machine can fail the kernel's IO-APIC timer check.
  const kernelParams = input.ramdiskKernelParams === undefined ? 'no_timer_check rackside.lldp_seconds=0' : input.ramdiskKernelParams;
  return [
    `# rackside config of ${lab.id} (${lab.source})`,
    'agent:',
    `  id: ${lab.id}`,
    `  stateDir: ${JSON.stringify(input.stateDir)}`,
    'provisioner: local',
    'management:',
    `  listen: 127.0.0.1:${n.managementPort}`,
    ...networkLines(input.network ?? 'ipv4'),
    ...(input.tftpRoot === undefined ? [] : [`  root: ${JSON.stringify(input.tftpRoot)}`]),
    'images:',
    `  cacheDir: ${JSON.stringify(input.cacheDir)}`,
    ...(kernelParams === null ? [] : ['  ramdisk:', `    kernelParams: ${kernelParams}`]),
    'bmc:',
    '  powerPollSeconds: 10',
    'log:',
    `  level: ${input.logLevel}`,
    '',
  ].join('\n');
}

/** What a test adds to a rack host's BareMetalHost: spec fields (image, automatedCleaningMode …), annotations, a userData secret. */
export interface HostManifestExtras {
  spec?: Record<string, unknown>;
  annotations?: Record<string, string>;
  /** Creates Secret `<name>-user-data` (key `userData`) and points `spec.userData` at it. */
  userData?: string;
}

/**
 * A BareMetalHost and its BMC Secret for guest `spec` (JSON, as `POST /api/v1/apply` takes it),
 * plus the userData Secret when `extras.userData` is given.
 */
export function hostManifests(spec: RackHostSpec, bmc: { address: string; username: string; password: string }, online: boolean, extras: HostManifestExtras = {}): unknown[] {
  const secretName = `${spec.name}-bmc-secret`;
  const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  const userDataName = `${spec.name}-user-data`;
  const userData = extras.userData === undefined ? [] : [{
    apiVersion: 'v1', kind: 'Secret', metadata: { name: userDataName, namespace: 'default' }, type: 'Opaque', data: { userData: base64(extras.userData) },
  }];
  return [
    ...userData,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace: 'default' },
      type: 'Opaque',
      data: { username: base64(bmc.username), password: base64(bmc.password) },
    },
    {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: {
        name: spec.name,
        namespace: 'default',
        annotations: { 'rackside.io/description': `QEMU ${spec.firmware.toUpperCase()} guest, ${spec.bmc === 'ipmi' ? 'ipmi_sim' : 'virtual Redfish'} BMC`, ...extras.annotations },
      },
      spec: {
        online,
        bootMACAddress: spec.mac,
        bootMode: spec.firmware === 'bios' ? 'legacy' : 'UEFI',
        bmc: { address: bmc.address, credentialsName: secretName },
        ...(extras.userData === undefined ? {} : { userData: { name: userDataName, namespace: 'default' } }),
        ...extras.spec,
      },
    },
  ];
}
