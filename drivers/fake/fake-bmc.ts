/**
 * @module An in-memory BMC for tests and the demo: power, boot override, virtual media, BIOS
 * with schema and pending changes, firmware with tasks, RAID, event subscriptions, Secure Boot
 * and a deterministic inventory derived from the host name. Its knobs reproduce what real BMCs
 * do to a provisioner: unreachable, bad credentials, busy, slow (a virtual-millisecond counter —
 * no clock), delayed PowerState, sticky one-time boot overrides, failing power-on.
 * No I/O and no timers; the driver view over it is fake-driver.ts.
 */
import type {
  BiosAttributeSchema, BootDevice, BootMode, BootOverride, CapabilityName, EventSubscription,
  FirmwareComponent, PowerState, RaidVolume, TaskStatus, VirtualMediaDevice, VirtualMediaSlot,
} from '../capabilities.js';

/** Behaviour switches; mutate them at any time (`bmc.knobs.unreachable = true`). */
export interface FakeBmcKnobs {
  /** Every call fails with `RACKSIDE_ERR_BMC_UNREACHABLE`. */
  unreachable: boolean;
  /** Every call fails with `RACKSIDE_ERR_BMC_AUTH` (also when the password differs from `password`). */
  authFails: boolean;
  /** `setPower('on')` (and reset/cycle from off) fails with `RACKSIDE_ERR_BMC_PROTOCOL`. */
  failPowerOn: boolean;
  /** The next N calls fail with `RACKSIDE_ERR_BMC_BUSY`, then calls succeed again. */
  busyCalls: number;
  /** Virtual milliseconds each call takes; above the driver's `timeoutMs` the call times out. */
  slowMs: number;
  /** A one-time boot override survives the boot (a real iDRAC/iLO quirk); default false. */
  bootDeviceSticky: boolean;
  /** After a power-on request, `getPowerState` still reports the old state this many times. */
  powerOnDelayCalls: number;
  /** Same for power-off requests. */
  powerOffDelayCalls: number;
  /** How many `getTask` polls report `running` before a task completes (0 = the first poll completes it). */
  taskCalls: number;
  /** Capabilities this fake does not offer (the registry fills them with the noop). */
  omit: CapabilityName[];
}

/** One recorded call. */
export interface FakeCall {
  readonly capability: CapabilityName;
  readonly operation: string;
  readonly args: readonly unknown[];
}

/** One boot the fake host performed. */
export interface FakeBoot {
  readonly device: BootDevice;
  readonly mode: BootMode | undefined;
  /** Image in the CD slot at boot time, when booting from `cdrom`; the HttpBootUri when booting by `uefi-http` with one. */
  readonly mediaUrl: string | undefined;
}

interface PendingPower {
  readonly target: 'on' | 'off';
  callsLeft: number;
}

interface FakeTask {
  readonly id: string;
  pollsLeft: number;
  done: boolean;
  readonly messages: string[];
  readonly onComplete: () => void;
}

/** Default knobs: a healthy, fast, well-behaved BMC. */
export function defaultFakeKnobs(): FakeBmcKnobs {
  return {
    unreachable: false, authFails: false, failPowerOn: false, busyCalls: 0, slowMs: 0,
    bootDeviceSticky: false, powerOnDelayCalls: 0, powerOffDelayCalls: 0, taskCalls: 1, omit: [],
  };
}

/** FNV-1a 32-bit hash: a stable seed for per-host fake identities. */
function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Deterministic locally administered MAC (52:54:00 is QEMU's prefix) for NIC `index` of `name`. */
export function fakeMacAddress(name: string, index: number): string {
  const h = hashName(`${name}#${index}`);
  const bytes = [0x52, 0x54, 0x00, (h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

const BIOS_SCHEMA: Readonly<Record<string, BiosAttributeSchema>> = {
  BootMode: { attributeType: 'Enumeration', allowableValues: ['Uefi', 'Bios'] },
  ProcVirtualization: { attributeType: 'Enumeration', allowableValues: ['Enabled', 'Disabled'] },
  ProcHyperthreading: { attributeType: 'Enumeration', allowableValues: ['Enabled', 'Disabled'] },
  SriovGlobalEnable: { attributeType: 'Enumeration', allowableValues: ['Enabled', 'Disabled'] },
  NumaNodesPerSocket: { attributeType: 'Integer', lowerBound: 1, upperBound: 4 },
  AssetTag: { attributeType: 'String', minLength: 0, maxLength: 32 },
  SystemSerial: { attributeType: 'String', readOnly: true },
  SetupPassword: { attributeType: 'Password' },
};

/** The simulated BMC and host. State is public for assertions; change it through methods. */
export class FakeBmc {
  readonly name: string;
  readonly knobs: FakeBmcKnobs;
  /** Expected password; undefined accepts any. */
  password: string | undefined;
  readonly calls: FakeCall[] = [];
  /** Sum of `slowMs` over all calls: virtual time spent talking to this BMC. */
  virtualElapsedMs = 0;
  power: 'on' | 'off' = 'off';
  readonly boots: FakeBoot[] = [];
  bootOverride: BootOverride = { device: 'none', persistent: false, mode: undefined };
  readonly media = new Map<VirtualMediaDevice, string>();
  readonly bios = new Map<string, string>();
  readonly pendingBios = new Map<string, string>();
  readonly firmware: FirmwareComponent[];
  volumes: RaidVolume[] = [];
  readonly subscriptions = new Map<string, EventSubscription>();
  secureBoot = false;
  /** How many times a driver over this BMC was closed. */
  closeCount = 0;
  #pendingPower: PendingPower | undefined;
  readonly #tasks = new Map<string, FakeTask>();
  #nextId = 1;

  constructor(name: string, knobs: Partial<FakeBmcKnobs> = {}) {
    this.name = name;
    this.knobs = { ...defaultFakeKnobs(), ...knobs };
    this.password = undefined;
    const serial = `FAKE-${hashName(name).toString(16).padStart(8, '0').toUpperCase()}`;
    for (const [k, v] of Object.entries({
      BootMode: 'Uefi', ProcVirtualization: 'Enabled', ProcHyperthreading: 'Enabled', SriovGlobalEnable: 'Disabled',
      NumaNodesPerSocket: '1', AssetTag: '', SystemSerial: serial, SetupPassword: '',
    })) this.bios.set(k, v);
    this.firmware = [
      { id: 'BMC', component: 'bmc', name: 'Fake BMC firmware', version: '1.0.0', updateable: true },
      { id: 'BIOS', component: 'bios', name: 'Fake UEFI firmware', version: '2.1.0', updateable: true },
      { id: 'NIC.1', component: 'nic:NIC.1', name: 'Fake 25GbE NIC', version: '20.5.13', updateable: true },
    ];
  }

  /** A fresh id for tasks and subscriptions (`task-1`, `sub-2` …). */
  nextId(prefix: string): string {
    return `${prefix}-${this.#nextId++}`;
  }

  /** Power state as reported, honouring the delay knobs. */
  reportPowerState(): PowerState {
    const pending = this.#pendingPower;
    if (pending !== undefined) {
      if (pending.callsLeft > 0) {
        pending.callsLeft -= 1;
        return this.power;
      }
      this.#pendingPower = undefined;
      this.#settle(pending.target);
    }
    return this.power;
  }

  /** Starts a transition to `target`, possibly delayed; re-requesting the pending target is a no-op. */
  requestPower(target: 'on' | 'off'): void {
    if (this.#pendingPower?.target === target) return;
    if (this.#pendingPower === undefined && this.power === target) return;
    const delay = target === 'on' ? this.knobs.powerOnDelayCalls : this.knobs.powerOffDelayCalls;
    if (delay > 0) this.#pendingPower = { target, callsLeft: delay };
    else {
      this.#pendingPower = undefined;
      this.#settle(target);
    }
  }

  /** A reset: the host boots again at once (from off it powers on). */
  reboot(): void {
    this.#pendingPower = undefined;
    this.power = 'on';
    this.#boot();
  }

  #settle(target: 'on' | 'off'): void {
    const wasOff = this.power === 'off';
    this.power = target;
    if (target === 'on' && wasOff) this.#boot();
  }

  #boot(): void {
    const override = this.bootOverride;
    const device: BootDevice = override.device === 'none' ? 'disk' : override.device;
    const mediaUrl = device === 'cdrom' ? this.media.get('cd') : device === 'uefi-http' ? override.httpBootUri : undefined;
    this.boots.push({ device, mode: override.mode, mediaUrl });
    if (!override.persistent && !this.knobs.bootDeviceSticky) {
      this.bootOverride = { device: 'none', persistent: false, mode: undefined };
    }
    for (const [k, v] of this.pendingBios) this.bios.set(k, v);
    this.pendingBios.clear();
  }

  /** Virtual media slots in a fixed order. */
  mediaSlots(): VirtualMediaSlot[] {
    return (['cd', 'usb'] as const).map((device) => {
      const imageUrl = this.media.get(device);
      return { device, inserted: imageUrl !== undefined, imageUrl };
    });
  }

  /** BIOS schema of the fake (Enumeration, Integer, String, read-only and Password attributes). */
  biosSchema(): Readonly<Record<string, BiosAttributeSchema>> {
    return BIOS_SCHEMA;
  }

  /** Starts a task that completes after `knobs.taskCalls` polls, then runs `onComplete`. */
  startTask(description: string, onComplete: () => void): string {
    const id = this.nextId('task');
    this.#tasks.set(id, { id, pollsLeft: this.knobs.taskCalls, done: false, messages: [`${description} scheduled`], onComplete });
    return id;
  }

  /** Polls a task; undefined when the id is unknown. */
  pollTask(id: string): TaskStatus | undefined {
    const task = this.#tasks.get(id);
    if (task === undefined) return undefined;
    if (!task.done) {
      if (task.pollsLeft > 0) {
        task.pollsLeft -= 1;
        return { id, state: 'running', percentComplete: 50, messages: [...task.messages] };
      }
      task.done = true;
      task.onComplete();
      task.messages.push('completed');
    }
    return { id, state: 'completed', percentComplete: 100, messages: [...task.messages] };
  }
}
