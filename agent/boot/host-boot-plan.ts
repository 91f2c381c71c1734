/**
 * @module What a host should boot now, decided from its BareMetalHost and the provisioner's
 * {@link RamdiskIntent} (boot-intent.ts): the agent side of bootsvc's boot lookup. The provisioner's intent wins; otherwise the provisioning state decides —
 * states that run the ramdisk (inspecting, preparing, provisioning, deprovisioning) boot it,
 * provisioned hosts boot their disk, everything else has nothing to boot.
 * @pure
 */
import type { BootPlan, BootTarget } from '../../bootsvc/index.js';
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

/** Builds the boot target of `host` (the token must already be in `intent` for ramdisk boots). */
export function hostBootTarget(host: BareMetalHost, intent: RamdiskIntent, defaults: RamdiskDefaults): BootTarget {
  const kind = hostBootKind(host, intent);
  let plan: BootPlan;
  switch (kind) {
    case 'ramdisk': {
      plan = {
        kind: 'ramdisk',
        purpose: 'ramdisk',
        kernel: intent.kernelUrl ?? defaults.kernel,
        initrds: typeof intent.initrdUrl === 'string' ? [intent.initrdUrl] : intent.initrdUrl ?? defaults.initrds,
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
