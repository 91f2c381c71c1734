/**
 * @module Capability interfaces for BMC-side configuration and inventory: BIOS settings with
 * schema, firmware inventory and updates, BMC tasks, hardware RAID, event subscriptions and
 * out-of-band inventory. Split from capabilities.ts (power, boot, media, secure boot, info),
 * which assembles them into `BmcCapabilitySet`; the same re-entrancy rules apply. Types only.
 * @pure
 */

/** Type of a BIOS attribute (Redfish AttributeRegistry `Type`; metal3 SettingSchema `attribute_type`). */
export type BiosAttributeType = 'Enumeration' | 'String' | 'Integer' | 'Boolean' | 'Password' | '';

/** Schema of one BIOS attribute (metal3 SettingSchema, in this module's camelCase). */
export interface BiosAttributeSchema {
  readonly attributeType: BiosAttributeType;
  readonly allowableValues?: readonly string[];
  readonly lowerBound?: number;
  readonly upperBound?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly readOnly?: boolean;
  readonly unique?: boolean;
}

/** BIOS settings as read: current values, schema and changes waiting for a reboot. */
export interface BiosSettings {
  readonly current: Readonly<Record<string, string>>;
  readonly schema: Readonly<Record<string, BiosAttributeSchema>>;
  /** Staged values (Redfish `@Redfish.Settings` / iDRAC job) applied at the next reset. */
  readonly pending: Readonly<Record<string, string>>;
}

/** Outcome of staging BIOS or RAID changes. */
export interface StagedChange {
  /** True when the change takes effect only after the host resets. */
  readonly rebootRequired: boolean;
  /** BMC task/job to follow with {@link TaskControl.getTask}, when the BMC created one. */
  readonly taskId: string | undefined;
}

/** Reads and stages BIOS settings. */
export interface BiosSettingsControl {
  /** Reads values, schema and pending changes. */
  getBiosSettings(): Promise<BiosSettings>;
  /** Stages changes; re-applying already pending or current values is a no-op. */
  applyBiosSettings(changes: Readonly<Record<string, string | number | boolean>>): Promise<StagedChange>;
}

/** One firmware component (Redfish FirmwareInventory member). */
export interface FirmwareComponent {
  /** Resource id, e.g. `BMC`, `BIOS`, `NIC.Slot.1-1`. */
  readonly id: string;
  /** metal3 component name: `bmc`, `bios`, `nic:<id>`, or the id for anything else. */
  readonly component: string;
  readonly name: string;
  readonly version: string;
  readonly updateable: boolean;
}

/** Request of {@link FirmwareControl.simpleUpdate} (Redfish UpdateService.SimpleUpdate). */
export interface FirmwareUpdateRequest {
  readonly imageUrl: string;
  /** Component ids to update; undefined lets the BMC decide from the image. */
  readonly targets?: readonly string[];
}

/** Lists firmware and starts updates. */
export interface FirmwareControl {
  /** Reads the firmware inventory. */
  getFirmwareInventory(): Promise<readonly FirmwareComponent[]>;
  /** Starts an update and returns the task id to poll with {@link TaskControl.getTask}. */
  simpleUpdate(request: FirmwareUpdateRequest): Promise<{ readonly taskId: string }>;
}

/** State of a BMC task (Redfish TaskState folded to what callers act on). */
export type TaskState = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

/** A BMC task as polled. */
export interface TaskStatus {
  readonly id: string;
  readonly state: TaskState;
  readonly percentComplete: number | undefined;
  /** BMC messages, most recent last (for errorMessage and the flight recorder). */
  readonly messages: readonly string[];
}

/** Follows long-running BMC tasks (Redfish task monitors, iDRAC jobs). */
export interface TaskControl {
  /** Reads a task; an unknown id throws a `BmcError` (protocol). */
  getTask(taskId: string): Promise<TaskStatus>;
}

/** A RAID level as metal3 spells it. */
export type RaidLevel = '0' | '1' | '5' | '6' | '1+0' | '5+0' | '6+0';

/** A hardware RAID volume to create (metal3 HardwareRAIDVolume, sizes in bytes). */
export interface RaidVolumeRequest {
  readonly name?: string;
  readonly level: RaidLevel;
  /** Undefined = all remaining space (metal3 `sizeGibibytes` unset). */
  readonly sizeBytes?: number;
  readonly physicalDisks?: readonly string[];
  readonly diskCount?: number;
  readonly controller?: string;
  readonly rotational?: boolean;
}

/** An existing RAID volume. */
export interface RaidVolume {
  readonly id: string;
  readonly name: string;
  readonly level: RaidLevel;
  readonly sizeBytes: number;
  readonly controller: string;
  readonly physicalDisks: readonly string[];
}

/** A storage controller and the drives behind it. */
export interface RaidController {
  readonly id: string;
  readonly name: string;
  readonly drives: readonly string[];
  readonly supportedLevels: readonly RaidLevel[];
}

/** Hardware RAID through the BMC (Redfish Storage/Volumes). */
export interface RaidControl {
  /** Reads controllers and volumes. */
  getRaidConfig(): Promise<{ readonly controllers: readonly RaidController[]; readonly volumes: readonly RaidVolume[] }>;
  /** Replaces all volumes with `volumes` (an empty list deletes them all); same set = no-op. */
  applyRaidConfig(volumes: readonly RaidVolumeRequest[]): Promise<StagedChange>;
}

/** Request of {@link EventSubscriptionControl.createSubscription} (metal3 BMCEventSubscription). */
export interface EventSubscriptionRequest {
  /** Webhook URL the BMC POSTs events to. */
  readonly destination: string;
  readonly context?: string;
  /** Extra headers the BMC sends with each event (from the subscription's secret). */
  readonly httpHeaders?: Readonly<Record<string, string>>;
}

/** A subscription the BMC holds. */
export interface EventSubscription {
  readonly id: string;
  readonly destination: string;
  readonly context: string;
}

/** Manages BMC event subscriptions (Redfish EventService). */
export interface EventSubscriptionControl {
  /** Creates a subscription and returns its BMC id. */
  createSubscription(request: EventSubscriptionRequest): Promise<{ readonly id: string }>;
  /** Deletes a subscription; a missing id is a no-op. */
  deleteSubscription(id: string): Promise<void>;
  /** Lists subscriptions. */
  listSubscriptions(): Promise<readonly EventSubscription[]>;
}

/** Hardware seen by the BMC without booting the host (fast, partial inspection). */
export interface OutOfBandInventory {
  readonly system: {
    readonly manufacturer: string | undefined;
    readonly model: string | undefined;
    readonly serialNumber: string | undefined;
    readonly uuid: string | undefined;
  };
  readonly bios: { readonly vendor: string | undefined; readonly version: string | undefined; readonly releaseDate: string | undefined };
  readonly processors: readonly {
    readonly model: string | undefined;
    readonly architecture: string | undefined;
    readonly cores: number | undefined;
    readonly threads: number | undefined;
    readonly maxSpeedMhz: number | undefined;
  }[];
  readonly memoryMebibytes: number | undefined;
  readonly nics: readonly {
    readonly id: string;
    readonly macAddress: string | undefined;
    readonly speedMbps: number | undefined;
    readonly linkUp: boolean | undefined;
  }[];
  readonly drives: readonly {
    readonly id: string;
    readonly model: string | undefined;
    readonly serialNumber: string | undefined;
    readonly sizeBytes: number | undefined;
    readonly mediaType: 'HDD' | 'SSD' | undefined;
    readonly protocol: string | undefined;
  }[];
  /**
   * Parts of the BMC's tree that were skipped because the BMC does not have them (e.g. a Memory
   * collection answering HTTP 404), one sentence each naming the part and the answer; the fields
   * above hold everything else. Absent when nothing was skipped. Callers show each one (the agent
   * puts them on the host's events) — a partial inventory is not a failure.
   */
  readonly warnings?: readonly string[];
}

/** Out-of-band inventory. */
export interface InventoryControl {
  /** Reads what the BMC knows about the host's hardware. */
  getInventory(): Promise<OutOfBandInventory>;
}
