/**
 * @module What a host should boot now, decided from its BareMetalHost and the provisioner's
 * {@link RamdiskIntent} (boot-intent.ts): the agent side of bootsvc's boot lookup. The provisioner's intent wins; otherwise the provisioning state decides —
 * states that run the ramdisk (inspecting, preparing, provisioning, deprovisioning) boot it,
 * provisioned hosts boot their disk, everything else has nothing to boot.
 * @pure
 */
import type { BootPlan, BootTarget, ClientArch } from '../../bootsvc/index.js';
import { debianArchOf, type DebianArch } from '../../images/index.js';
import type { BareMetalHost, ProvisioningState } from '../host/types.js';
import type { RamdiskIntent } from './boot-intent.js';

export type { RamdiskIntent } from './boot-intent.js';

/** The agent's defaults for ramdisk boots. */
export interface RamdiskDefaults {
  /** Where the in-ramdisk agent reports (`rackside.url=`). */
  agentUrl: string;
  kernel: string;
  initrds: string[];
  extraKernelParams?: string[];
  consoles?: string[];
  /**
   * The ramdisk of each architecture other than the head node's (`arm64`: `/ramdisk/arm64/vmlinuz`);
   * `kernel` and `initrds` above are the head node's, and serve hosts of no known architecture.
   */
  byArch?: Partial<Record<DebianArch, { kernel: string; initrds: string[] }>>;
}

/** Debian's architecture of a DHCP client architecture (RFC 4578 §2.1, option 93: 7/9 x86_64 EFI, 11 arm64 UEFI, 19 arm64 HTTP boot; 0 x86 BIOS, run on amd64 servers). */
const CLIENT_ARCH: Readonly<Partial<Record<ClientArch, DebianArch>>> = { x86: 'amd64', x86_64: 'amd64', arm64: 'arm64' };

/**
 * The architecture of the ramdisk `host` boots, from the first that says: `spec.architecture`,
 * the DHCP client architecture of this boot, the inspected `status.hardware.cpu.arch`; undefined
 * when none does (the head node's ramdisk is then served).
 */
export function hostRamdiskArch(host: Pick<BareMetalHost, 'spec' | 'status'>, clientArch?: ClientArch): DebianArch | undefined {
  const spec = host.spec.architecture;
  if (spec !== undefined && spec !== '') return debianArchOf(spec);
  const fromDhcp = clientArch === undefined ? undefined : CLIENT_ARCH[clientArch];
  if (fromDhcp !== undefined) return fromDhcp;
  const inspected = host.status.hardware?.cpu.arch;
  return inspected === undefined || inspected === '' ? undefined : debianArchOf(inspected);
}

/** Provisioning states whose handlers need the host running the rackside ramdisk. */
export const RAMDISK_STATES: ReadonlySet<ProvisioningState> = new Set<ProvisioningState>(['inspecting', 'preparing', 'provisioning', 'deprovisioning']);
/** Provisioning states in which the host runs its installed OS. */
export const LOCAL_DISK_STATES: ReadonlySet<ProvisioningState> = new Set<ProvisioningState>(['provisioned', 'externally provisioned']);

/** The kind of boot a host needs now: the intent's, else by state; detached hosts are left alone. */
export function hostBootKind(host: BareMetalHost, intent: RamdiskIntent): NonNullable<RamdiskIntent['boot']> {
  if (intent.boot !== undefined) return intent.boot;
  if (host.status.operationalStatus === 'detached') return 'none';
  const state = host.status.provisioning.state;
  if (RAMDISK_STATES.has(state)) return 'ramdisk';
  if (LOCAL_DISK_STATES.has(state)) return 'local-disk';
  return 'none';
}

/**
 * Builds the boot target of `host` (the token must already be in `intent` for ramdisk boots);
 * a ramdisk boot gets the ramdisk of the host's architecture ({@link hostRamdiskArch}, with the
 * DHCP client architecture `clientArch` of this boot).
 */
export function hostBootTarget(host: BareMetalHost, intent: RamdiskIntent, defaults: RamdiskDefaults, clientArch?: ClientArch): BootTarget {
  const kind = hostBootKind(host, intent);
  let plan: BootPlan;
  switch (kind) {
    case 'ramdisk': {
      const arch = hostRamdiskArch(host, clientArch);
      const ramdisk = (arch === undefined ? undefined : defaults.byArch?.[arch]) ?? defaults;
      plan = {
        kind: 'ramdisk',
        purpose: 'ramdisk',
        kernel: intent.kernelUrl ?? ramdisk.kernel,
        initrds: typeof intent.initrdUrl === 'string' ? [intent.initrdUrl] : intent.initrdUrl ?? ramdisk.initrds,
        agentUrl: defaults.agentUrl,
        extraKernelParams: [...(defaults.extraKernelParams ?? []), ...(intent.extraKernelParams ?? [])],
      };
      if (intent.token !== undefined) plan.token = intent.token;
      if (defaults.consoles !== undefined) plan.consoles = defaults.consoles;
      break;
    }
    case 'live-iso':
      plan = intent.isoUrl === undefined ? { kind: 'none', message: 'live ISO boot requested without an ISO URL' } : { kind: 'live-iso', iso: intent.isoUrl };
      break;
    case 'local-disk':
      plan = { kind: 'local-disk' };
      break;
    case 'none':
      plan = { kind: 'none', message: intent.message ?? `host ${host.metadata.name} has nothing to boot in state ${JSON.stringify(host.status.provisioning.state)}` };
      break;
  }
  return { plan, secureBoot: host.spec.bootMode === 'UEFISecureBoot', host: host.metadata.name };
}
