/**
 * @module State of a virtual Redfish BMC: its systems (power through a {@link HostBackend},
 * boot override, BIOS values and pending settings, Secure Boot, virtual media slots, RAID
 * volumes), sessions, tasks with their monitors, iDRAC-style jobs, event subscriptions and
 * deliveries, firmware, the request log, and the fault knobs tests turn. Payload rendering is
 * payloads.ts; HTTP is virtual-bmc.ts.
 */
import type { HostBackend, HostBootTarget } from './backend.js';

/** Which real BMC the layout imitates: ids, paths and quirks. */
export type VirtualBmcFlavor = 'generic' | 'idrac' | 'ilo5';

/** A BIOS value as Redfish carries it. */
export type VirtualBiosValue = string | number | boolean | null;

/** A fault injected into answers. `match` is a path substring (default: every path). */
export type VirtualBmcFault = { readonly match?: string; readonly method?: string; times?: number } & (
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSeconds?: number }
  | { readonly kind: 'html'; readonly status?: number }
  | { readonly kind: 'truncated' }
  | { readonly kind: 'huge'; readonly bytes: number; readonly contentLength?: boolean }
  | { readonly kind: 'slow'; readonly delayMs: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'reset' }
);

/** One virtual media slot. */
export interface VirtualMediaSlotState {
  readonly id: string;
  readonly mediaTypes: readonly string[];
  image: string | undefined;
  inserted: boolean;
  writeProtected: boolean;
}

/** One RAID volume. */
export interface VirtualVolume {
  readonly id: string;
  readonly name: string;
  readonly raidType: string;
  readonly capacityBytes: number;
  readonly drives: readonly string[];
}

/** One host behind the BMC. */
export interface VirtualSystem {
  readonly id: string;
  readonly backend: HostBackend;
  boot: { target: HostBootTarget; enabled: 'Disabled' | 'Once' | 'Continuous'; mode: 'UEFI' | 'Legacy' };
  /** Boot.HttpBootUri (ComputerSystem v1_9); iDRAC has no such property (it keeps HTTP boot URIs in BIOS attributes). */
  httpBootUri: string | null;
  readonly bios: Record<string, VirtualBiosValue>;
  readonly pendingBios: Record<string, VirtualBiosValue>;
  secureBoot: boolean;
  volumes: VirtualVolume[];
  nextVolume: number;
}

/** A task and its monitor. */
export interface VirtualTask {
  readonly id: string;
  readonly name: string;
  pollsLeft: number;
  /** `Pending`: scheduled for the next boot of a system (`updatesApplyAtReset`). */
  state: 'Running' | 'Pending' | 'Completed' | 'Exception';
  readonly messages: string[];
  readonly run: () => Promise<void>;
}

/** An iDRAC job (`Managers/iDRAC.Embedded.1/Jobs/JID_…`). */
export interface VirtualJob {
  readonly id: string;
  readonly target: string;
  state: 'Scheduled' | 'Completed';
}

/** An EventService subscription. */
export interface VirtualSubscription {
  readonly id: string;
  readonly destination: string;
  readonly context: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** One POST the BMC made to a subscriber. */
export interface EventDelivery {
  readonly destination: string;
  readonly status: number | undefined;
  readonly error: string | undefined;
}

/** One request the BMC received (for assertions on ordering, counts and headers). */
export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: 'basic' | 'token' | 'none';
  readonly ifMatch: string | undefined;
  readonly startedAt: number;
}

/** Behaviour knobs; change them at any time. */
export interface VirtualBmcKnobs {
  /** Delay between accepting a reset and the power change (real BMCs: seconds). */
  powerDelayMs: number;
  /** Task monitors answer 202 this many times before the task completes. */
  taskPolls: number;
  /** Answer 202 + task monitor for volume create/delete (else 201/204). */
  asyncVolumes: boolean;
  /** Reject PATCH without If-Match (428). */
  requireIfMatch: boolean;
  /** Offer SessionService (else basic auth only). */
  sessions: boolean;
  /** The service root links an UpdateService (firmware inventory and SimpleUpdate); false = a BMC without one. */
  updateService: boolean;
  /** Fail the next SimpleUpdate task (TaskState Exception). */
  failNextTask: boolean;
  /** ResetTypes the System accepts (and advertises). */
  resetTypes: string[];
  /** Advertise them through `@Redfish.ActionInfo` instead of inline `@Redfish.AllowableValues`. */
  resetViaActionInfo: boolean;
  /** InsertMedia without `TransferProtocolType` fails with 400 (Supermicro/older iDRAC behaviour sushy works around). */
  insertNeedsTransferProtocol: boolean;
  /** SimpleUpdate tasks stay `Pending` until the next boot of a system, then apply (iDRAC jobs, most BIOS images). */
  updatesApplyAtReset: boolean;
}

/** Default knobs: a fast, well-behaved BMC. */
export function defaultKnobs(): VirtualBmcKnobs {
  return {
    powerDelayMs: 0, taskPolls: 2, asyncVolumes: true, requireIfMatch: false, sessions: true, updateService: true, failNextTask: false,
    resetTypes: ['On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'PowerCycle', 'Nmi'],
    resetViaActionInfo: false, insertNeedsTransferProtocol: false, updatesApplyAtReset: false,
  };
}

/** A firmware component. */
export interface VirtualFirmware {
  readonly id: string;
  readonly name: string;
  version: string;
  readonly updateable: boolean;
}

/** Drives of every system's one storage controller. */
export const VIRTUAL_DRIVES = ['Disk.0', 'Disk.1', 'Disk.2', 'Disk.3'] as const;
/** Size of each virtual drive. */
export const VIRTUAL_DRIVE_BYTES = 960_197_124_096;

/** The whole BMC. */
export class VirtualBmcState {
  readonly flavor: VirtualBmcFlavor;
  readonly username: string;
  readonly password: string;
  readonly systems = new Map<string, VirtualSystem>();
  readonly managerId: string;
  readonly media: VirtualMediaSlotState[];
  readonly sessions = new Map<string, { readonly id: string; readonly token: string }>();
  readonly tasks = new Map<string, VirtualTask>();
  readonly jobs = new Map<string, VirtualJob>();
  readonly subscriptions = new Map<string, VirtualSubscription>();
  readonly deliveries: EventDelivery[] = [];
  readonly firmware: VirtualFirmware[];
  readonly requests: LoggedRequest[] = [];
  readonly faults: VirtualBmcFault[] = [];
  readonly knobs: VirtualBmcKnobs;
  /** Requests being handled right now and the most seen at once (one-at-a-time checks). */
  inFlight = 0;
  maxInFlight = 0;
  #nextId = 1;

  constructor(flavor: VirtualBmcFlavor, username: string, password: string, knobs: Partial<VirtualBmcKnobs>) {
    this.flavor = flavor;
    this.username = username;
    this.password = password;
    this.knobs = { ...defaultKnobs(), ...knobs };
    this.managerId = flavor === 'idrac' ? 'iDRAC.Embedded.1' : '1';
    this.media = flavor === 'ilo5'
      ? [{ id: '1', mediaTypes: ['Floppy', 'USBStick'], image: undefined, inserted: false, writeProtected: true },
        { id: '2', mediaTypes: ['CD', 'DVD'], image: undefined, inserted: false, writeProtected: true }]
      : [{ id: flavor === 'idrac' ? 'RemovableDisk' : 'Usb', mediaTypes: ['USBStick'], image: undefined, inserted: false, writeProtected: true },
        { id: flavor === 'idrac' ? 'CD' : 'Cd', mediaTypes: ['CD', 'DVD'], image: undefined, inserted: false, writeProtected: true }];
    this.firmware = [
      { id: flavor === 'idrac' ? 'Installed-25227-7.00.00.00__iDRAC.Embedded.1-1' : 'BMC', name: flavor === 'ilo5' ? 'iLO 5' : flavor === 'idrac' ? 'Integrated Dell Remote Access Controller' : 'BMC Firmware', version: '7.00.00', updateable: true },
      { id: flavor === 'idrac' ? 'Current-159-2.19.1__BIOS.Setup.1-1' : 'BIOS', name: flavor === 'ilo5' ? 'System ROM' : 'BIOS', version: '2.19.1', updateable: true },
      { id: flavor === 'idrac' ? 'Installed-0-22.5.7__NIC.Integrated.1-1-1' : 'NIC.1', name: 'Ethernet 25Gb 2-port Adapter (NIC)', version: '22.5.7', updateable: true },
    ];
    if (flavor === 'idrac') this.firmware.push({ id: 'Previous-25227-6.10.30.00__iDRAC.Embedded.1-1', name: 'Integrated Dell Remote Access Controller', version: '6.10.30', updateable: false });
  }

  /** Adds a system (id `1`… or iDRAC's `System.Embedded.1`). */
  addSystem(id: string, backend: HostBackend): VirtualSystem {
    const system: VirtualSystem = {
      id, backend, boot: { target: 'None', enabled: 'Disabled', mode: 'UEFI' }, httpBootUri: null,
      bios: {
        BootMode: 'Uefi', ProcVirtualization: 'Enabled', ProcHyperthreading: 'Enabled', SriovGlobalEnable: 'Disabled',
        NumaNodesPerSocket: 1, AssetTag: '', SerialNumber: `VRT${id.replace(/[^0-9A-Za-z]/g, '').padStart(6, '0')}`,
        SetupPassword: null, PxeEnabled: true,
      },
      pendingBios: {}, secureBoot: false, volumes: [], nextVolume: 0,
    };
    this.systems.set(id, system);
    return system;
  }

  /** A fresh numeric id for sessions, tasks, jobs and subscriptions. */
  nextId(): number {
    return this.#nextId++;
  }

  /** Drops every session (as a BMC reboot or session timeout does): tokens answer 401. */
  dropSessions(): void {
    this.sessions.clear();
  }

  /** Adds a fault; `times` limits how many answers it affects. */
  inject(fault: VirtualBmcFault): void {
    this.faults.push(fault);
  }

  /** Removes every fault. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  /** The first active fault for a request, consuming one of its `times`. */
  takeFault(method: string, path: string): VirtualBmcFault | undefined {
    const i = this.faults.findIndex((f) => (f.match === undefined || path.includes(f.match)) && (f.method === undefined || f.method === method));
    const fault = this.faults[i];
    if (fault === undefined) return undefined;
    if (fault.times !== undefined) {
      fault.times -= 1;
      if (fault.times <= 0) this.faults.splice(i, 1);
    }
    return fault;
  }
}
