/**
 * @module The provisioner as a plug-in: every provisioner (`local`, `fixture`, `demo`) is opened
 * as a {@link ProvisionerBackend} by backends.ts `openBackend`, the one place `provisioner:` is
 * read, and the daemon (agent/main.ts) wires whatever it holds through these fields alone.
 */
import type { Router } from 'express';
import type { Registry } from 'prom-client';
import type { BmcCallRecorder } from '../bmc/bmc-call-recorder.js';
import type { BootIntentSource } from '../boot/boot-intent.js';
import type { Config } from '../config.js';
import type { EraseRecorder } from '../erase/recorder.js';
import type { BareMetalHost } from '../host/types.js';
import type { Logger } from '../log.js';
import type { BmcObservation, ImageDownloadInput } from '../status-report.js';
import type { EventLog, NodeSublevels, ResourceStore } from '../store/types.js';
import type { Factory } from './provisioner.js';
import type { RamdiskBuildStatus } from './local/ramdisk-build-status.js';

/** What a backend that network-boots hosts needs the boot services (DHCP, TFTP, boot HTTP) to serve. */
export interface BackendBootServices {
  /** Routes boot HTTP serves beside the boot files (the ramdisk callbacks, virtual-media ISOs). */
  routes: Router;
  /** What each host boots now and with which ramdisk token (agent/boot/boot-intent.ts). */
  intents: BootIntentSource;
  /** More directories boot HTTP serves (prefix → directory): OS images, config drives. */
  mounts: Readonly<Record<string, string>>;
  /** Most file body bytes per second boot HTTP sends (the boot governor's budget); none: no limit. */
  httpBytesPerSecond?: number;
}

/** Status page sections a backend can fill (agent/status-report.ts). */
export interface BackendStatus {
  /** Each host's BMC as the backend last saw it. */
  bmc(hosts: readonly BareMetalHost[]): readonly BmcObservation[];
  /** Image preparations in progress, ready or failed. */
  images(): readonly ImageDownloadInput[];
  /** The background ramdisk builds (boot-services panel), every architecture's so far, the head node's first; absent when the backend builds none. */
  ramdisks?: () => RamdiskBuildStatus[];
}

/**
 * One provisioner, opened for the agent. Contract: `factory` makes the per-step provisioners the
 * reconciler drives; the optional parts are present exactly when the backend has them — `boot`
 * when hosts network-boot through the agent (the boot services start only then), `status` and
 * `metrics` for the status page and `/metrics`. {@link start} runs once before the reconciler
 * starts; {@link stop} once after it stopped (and after the boot services), also when the agent
 * fails to start part-way; neither throws for a backend that has nothing to do.
 */
export interface ProvisionerBackend {
  readonly factory: Factory;
  readonly boot?: BackendBootServices;
  readonly status?: BackendStatus;
  readonly metrics?: {
    /** Every BMC call (`rackside_bmc_call_duration_seconds`). */
    bmcCalls?: BmcCallRecorder;
    /** Registers the backend's own gauges and counters. */
    register?(registry: Registry): void;
  };
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What the agent gives a backend when it opens it. */
export interface BackendDeps {
  config: Config;
  /** The host resources, the event log, and the `nodes`/`inventories` sublevels the local backend's NodeTable owns. */
  store: ResourceStore & EventLog & NodeSublevels;
  logger: Logger;
  /** Asks for a reconcile of a host soon (agent/host/host-wakeups.ts). */
  wake: (name: string) => void;
  /** Records each clean as a signed erase record (agent/erase). */
  recordClean: EraseRecorder;
  /**
   * `auto` (the default): the local backend builds its ramdisk in the background and hosts wait
   * for it (local/ramdisk-builds.ts); `off`: no build and no wait, what is on disk is served
   * (tests and the demo, which bring their own ramdisk; env RACKSIDE_RAMDISK_BUILD=off).
   */
  ramdiskBuild?: 'auto' | 'off';
}
