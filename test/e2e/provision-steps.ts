/**
 * @module Steps shared by the provisioning end-to-end tests on the virtual rack
 * (provision.test.ts, provision-crash.test.ts): the management API calls (GET, apply, timeline),
 * waiting for a host's provisioning state with the evidence at the deadline (timeline, serial
 * console, agent log), finding steps in a host's timeline, and reading the guest's state.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { TestContext } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import type { StoredEvent } from '../../agent/store/types.js';
export { skipOrFail } from '../helpers/integration.js';
import { hostManifests, type HostManifestExtras } from '../lab/rack/rack-config.js';
import type { RackHost, VirtualRack } from '../lab/virtual-rack.js';

/** How long one phase (registration, provisioning, deprovisioning, deletion) may take under TCG. */
export const PHASE_DEADLINE_MS = 5 * 60_000;

/** "label N.N s" for the time between timeline items `a` and `b` (indexes), for the phase breakdown. */
export function span(items: readonly StoredEvent[], label: string, a: number, b: number): string {
  const ms = Date.parse(items[b]?.time ?? '') - Date.parse(items[a]?.time ?? '');
  return `${label} ${(ms / 1000).toFixed(1)} s`;
}


/** "N.N s" since `fromMs`. */
export function seconds(fromMs: number): string {
  return `${((Date.now() - fromMs) / 1000).toFixed(1)} s`;
}

/** The last `lines` lines of `text`. */
export function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** GETs `path` from the management API; fails unless 200. */
export async function getJson<T>(rack: VirtualRack, path: string): Promise<T> {
  const res = await fetch(`${rack.managementUrl}${path}`);
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** `POST /api/v1/apply` of `docs`; fails unless 200. */
export async function apply(rack: VirtualRack, docs: unknown[]): Promise<void> {
  const res = await fetch(`${rack.managementUrl}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
  assert.equal(res.status, 200, `apply: ${await res.text()}`);
}

/** The host's BareMetalHost and BMC Secret (its BMC's credentials) with `extras`. */
export function manifests(host: RackHost, online: boolean, extras: HostManifestExtras): unknown[] {
  const bmc = host.redfish ?? host.ipmi;
  const credentials = { username: bmc?.username ?? '', password: bmc?.password ?? '' };
  return hostManifests(host.spec, { address: host.bmcAddress, ...credentials }, online, extras);
}

/** Polls until the host reaches `state` without an error; fails with the evidence (serial, agent log, timeline) at the deadline. */
export async function waitState(t: TestContext, rack: VirtualRack, host: RackHost, state: string, deadlineMs = PHASE_DEADLINE_MS): Promise<BareMetalHost> {
  const name = host.spec.name;
  const started = Date.now();
  let last: BareMetalHost | undefined;
  const errors = new Set<string>();
  while (Date.now() - started < deadlineMs) {
    last = await getJson<BareMetalHost>(rack, `/api/v1/hosts/${name}`);
    if (last.status.provisioning.state === state && last.status.errorMessage === '') return last;
    const error = last.status.errorMessage;
    if (error !== '' && !errors.has(error)) {
      errors.add(error);
      t.diagnostic(`${name} in ${last.status.provisioning.state}: ${last.status.errorType}: ${error}`);
    }
    const serial = await host.serialLog();
    const panic = serial.lastIndexOf('Kernel panic - not syncing');
    // A panicked ramdisk never calls back: say so now rather than at the deadline.
    if (panic >= 0) assert.fail(`${name}: the guest's kernel panicked while ${last.status.provisioning.state}:\n${serial.slice(panic, panic + 400)}\n--- serial log (tail)\n${tail(serial)}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const items = await getJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=200`).catch(() => ({ items: [] }));
  const agentLog = await readFile(rack.agent.logFile, 'utf8').catch(() => '');
  assert.fail(
    `${name} did not reach ${state}: state ${last?.status.provisioning.state ?? '?'}, error ${JSON.stringify(last?.status.errorMessage ?? '')}\n` +
      `--- timeline of ${name} (tail)\n${items.items.slice(-40).map((e) => `${e.source} ${e.reason} ${e.message}`).join('\n')}\n` +
      `--- serial log of ${name} (tail)\n${tail(await host.serialLog())}\n--- agent log (tail)\n${tail(agentLog)}`,
  );
}

/** Index of the first item after `from` matching `match`, or a failure naming the step. */
export function stepAfter(name: string, items: readonly StoredEvent[], from: number, step: string, match: (e: StoredEvent) => boolean): number {
  const i = items.findIndex((e, index) => index > from && match(e));
  assert.ok(i >= 0, `${name}: timeline step "${step}" after #${from}; timeline:\n${items.map((e) => `${e.source} ${e.reason} ${e.message}`).join('\n')}`);
  return i;
}

/** The host's whole timeline (up to 1000 items). */
export async function timeline(rack: VirtualRack, name: string): Promise<StoredEvent[]> {
  return (await getJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=1000`)).items;
}

/** Is the guest's QEMU running? (pidfile and `-name`, as ipmi-bmc.ts's power status reads it). */
export async function guestRunning(host: RackHost): Promise<boolean> {
  if (host.redfish !== undefined) return (await host.redfish.backend.powerState()) === 'On';
  const pid = (await readFile(host.paths.pidFile, 'utf8').catch(() => '')).trim();
  if (pid === '') return false;
  const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  return cmdline.includes(`rackside-${host.spec.name}`);
}

/** Polls `check` until true; fails with the host's serial log at the deadline. */
export async function waitForGuest(check: () => Promise<boolean>, what: string, timeoutMs: number, host: RackHost): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.fail(`${what}: not within ${timeoutMs / 1000} s\n--- serial log (tail)\n${tail(await host.serialLog())}`);
}
