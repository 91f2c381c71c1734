/**
 * @module What an unknown MAC boots while discovery is on (docs/discovery.md, "Flow"): bootsvc's
 * `discoveryLookup` seam, asked by DHCP, boot HTTP and TFTP only for MACs no host has. An
 * admitted MAC (admissions.ts) gets the rackside ramdisk in discovery mode
 * (`rackside.mode=discovery`, and `rackside.enroll_bmc=1` with `discovery.enrollBMC`) with its
 * discovery token as `rackside.token=`; a refused one gets no target, so DHCP stays silent for
 * it and counts the refusal.
 */
import type { BootLookup, BootTarget, BootTargetQuery } from '../../bootsvc/index.js';
import type { RamdiskDefaults } from '../boot/host-boot-plan.js';
import { normalizeBootMac } from '../store/host-mac-index.js';
import type { DiscoveryAdmissions, RefusalReason } from './admissions.js';

/** Kernel parameter that puts the ramdisk agent in discovery mode (images/ramdisk/lib-discovery.sh). */
export const DISCOVERY_MODE_PARAM = 'rackside.mode=discovery';
/** Kernel parameter asking the discovery ramdisk to create its BMC user in-band (images/ramdisk/lib-ipmi.sh). */
export const ENROLL_BMC_PARAM = 'rackside.enroll_bmc=1';

/** Options of {@link DiscoveryBoot}. */
export interface DiscoveryBootOptions {
  admissions: DiscoveryAdmissions;
  /** Discovered hosts in the store now (counts against `discovery.maxHosts`). */
  discoveredCount: () => Promise<number>;
  nowMs: () => number;
  ramdisk: RamdiskDefaults;
  enrollBMC: boolean;
  /** Told of each refusal (the opener counts and reports them). */
  onRefused?: (mac: string, reason: RefusalReason) => void;
  /** Told of each fresh admission. */
  onAdmitted?: (mac: string) => void;
}

/** The discovery boot lookup (see the module comment). */
export class DiscoveryBoot implements BootLookup {
  constructor(private readonly options: DiscoveryBootOptions) {}

  /** {@inheritDoc BootLookup.target} Undefined when the MAC is refused. */
  async target(q: BootTargetQuery): Promise<BootTarget | undefined> {
    const { admissions, ramdisk } = this.options;
    const mac = normalizeBootMac(q.mac);
    const outcome = admissions.admit(mac, this.options.nowMs(), await this.options.discoveredCount());
    if (!outcome.admitted) {
      this.options.onRefused?.(mac, outcome.reason);
      return undefined;
    }
    if (outcome.fresh) this.options.onAdmitted?.(mac);
    return {
      plan: {
        kind: 'ramdisk',
        purpose: 'discovery',
        kernel: ramdisk.kernel,
        initrds: ramdisk.initrds,
        agentUrl: ramdisk.agentUrl,
        token: outcome.admission.token,
        extraKernelParams: [...(ramdisk.extraKernelParams ?? []), DISCOVERY_MODE_PARAM, ...(this.options.enrollBMC ? [ENROLL_BMC_PARAM] : [])],
        ...(ramdisk.consoles === undefined ? {} : { consoles: ramdisk.consoles }),
      },
    };
  }
}
