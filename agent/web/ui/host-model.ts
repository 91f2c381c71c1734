/**
 * @module What the status page shows about a host, computed from the BareMetalHost alone:
 * state labels and colour categories, the lifecycle step indicator, counts per state, the
 * rack filters, the operation-history table with durations, and duration formatting. Shared
 * by the browser bundle (agent/web/ui/client) and the unit tests.
 * @pure
 */
import type { BareMetalHost, NIC, OperationHistory, ProvisioningState } from '../../host/types.js';

/** Colour/semantic class of a host tile: resting, finished, working, failed, unmanaged, going away. */
export type StateCategory = 'ready' | 'done' | 'busy' | 'error' | 'idle' | 'gone';

/** The annotation rackside's demo rack (and operators) use for a one-line host description. */
export const DESCRIPTION_ANNOTATION = 'rackside.io/description';

/** Human label of a provisioning state (`''` is a host nobody has looked at yet). */
export function stateLabel(state: ProvisioningState): string {
  return state === '' ? 'new' : state;
}

const BUSY_STATES: ReadonlySet<ProvisioningState> = new Set<ProvisioningState>([
  '', 'registering', 'inspecting', 'match profile', 'preparing', 'provisioning', 'deprovisioning',
]);

/** The tile category: `error` wins, then detached/unmanaged (`idle`), deleting (`gone`), servicing (`busy`), then by state. */
export function categoryOf(host: BareMetalHost): StateCategory {
  const state = host.status.provisioning.state;
  if (host.status.operationalStatus === 'error' || (host.status.errorType ?? '') !== '') return 'error';
  if (host.metadata.deletionTimestamp !== undefined || state === 'deleting' || state === 'powering off before delete') return 'gone';
  if (host.status.operationalStatus === 'detached' || state === 'unmanaged') return 'idle';
  // Servicing (firmware changes during a reboot) is work in progress on a provisioned host.
  if (host.status.operationalStatus === 'servicing') return 'busy';
  if (state === 'provisioned' || state === 'externally provisioned') return 'done';
  if (BUSY_STATES.has(state)) return 'busy';
  return 'ready';
}

/** One step of the lifecycle indicator. */
export interface LifecycleStep {
  label: string;
  status: 'done' | 'current' | 'todo' | 'failed';
}

/** The step indicator of a host and a sentence for screen readers (`Step 4 of 6: available`). */
export interface LifecycleProgress {
  steps: LifecycleStep[];
  summary: string;
}

const MAIN_TRACK = ['register', 'inspect', 'prepare', 'available', 'provision', 'provisioned'] as const;

/** Index into {@link MAIN_TRACK} of the step a state is at (`match profile` finishes inspection). */
const MAIN_INDEX: Partial<Record<ProvisioningState, number>> = {
  '': 0, registering: 0, inspecting: 1, 'match profile': 2, preparing: 2, ready: 3, available: 3, provisioning: 4, provisioned: 5,
};

/** The main-track step each error type belongs to (a resting host can fail a later step). */
const ERROR_STEP: Partial<Record<string, number>> = {
  'registration error': 0, 'inspection error': 1, 'preparation error': 2, 'provisioning error': 4,
};

/** Builds a track: steps before `current` done; `current` done when resting, else current (or failed). */
function track(labels: readonly string[], current: number, resting: boolean, failedAt: number | undefined): LifecycleStep[] {
  return labels.map((label, i): LifecycleStep => {
    if (failedAt !== undefined && i === failedAt) return { label, status: 'failed' };
    if (failedAt !== undefined && i > failedAt) return { label, status: 'todo' };
    if (i < current || (resting && i === current)) return { label, status: 'done' };
    return { label, status: i === current ? 'current' : 'todo' };
  });
}

/**
 * The lifecycle track a host is on and where it is: register → inspect → prepare → available
 * → provision → provisioned; deprovisioning and deleting have their own short tracks. Resting
 * states (`available`, `provisioned`) count as done. A host in error shows the step its error
 * type names as `failed` (a host resting in `available` after provisioning gave up fails
 * `provision`), else its current step.
 */
export function lifecycleProgress(host: BareMetalHost): LifecycleProgress {
  const state = host.status.provisioning.state;
  const failed = categoryOf(host) === 'error';
  let steps: LifecycleStep[];
  if (state === 'deprovisioning') steps = track(['provisioned', 'deprovision', 'available'], 1, false, failed ? 1 : undefined);
  else if (state === 'powering off before delete' || state === 'deleting') {
    const at = state === 'deleting' ? 1 : 0;
    steps = track(['power off', 'delete'], at, false, failed ? at : undefined);
  } else if (state === 'externally provisioned') steps = track(['register', 'externally provisioned'], 1, true, failed ? 1 : undefined);
  else if (state === 'unmanaged') steps = track(['unmanaged: add BMC details'], 0, false, failed ? 0 : undefined);
  else {
    const index = MAIN_INDEX[state] ?? 0;
    const resting = state === 'available' || state === 'ready' || state === 'provisioned';
    const errorStep = ERROR_STEP[host.status.errorType ?? ''];
    const failedAt = !failed ? undefined : errorStep !== undefined && errorStep >= index ? errorStep : index;
    steps = track(MAIN_TRACK, index, resting, failedAt);
  }
  const at = steps.findIndex((s) => s.status === 'current' || s.status === 'failed');
  const doneCount = steps.filter((s) => s.status === 'done').length;
  const position = at >= 0 ? at + 1 : Math.max(1, doneCount);
  const label = steps[position - 1]?.label ?? '';
  const suffix = at >= 0 && steps[at]?.status === 'failed' ? ' (failed)' : at < 0 && doneCount === steps.length ? ' (complete)' : '';
  return { steps, summary: `Step ${position} of ${steps.length}: ${label}${suffix}` };
}

/** Count of hosts in one state, for the summary chips. */
export interface StateCount {
  state: ProvisioningState;
  count: number;
}

/**
 * Hosts per provisioning state (lifecycle order, zero counts left out), the number with errors
 * and the number discovered and waiting for a BMC ({@link isDiscovered}).
 */
export function countHosts(hosts: readonly BareMetalHost[], order: readonly ProvisioningState[]): { byState: StateCount[]; errors: number; discovered: number; total: number } {
  const counts = new Map<ProvisioningState, number>();
  let errors = 0;
  let discovered = 0;
  for (const host of hosts) {
    const state = host.status.provisioning.state;
    counts.set(state, (counts.get(state) ?? 0) + 1);
    if (categoryOf(host) === 'error') errors += 1;
    if (isDiscovered(host)) discovered += 1;
  }
  const known = order.filter((s) => counts.has(s)).map((state) => ({ state, count: counts.get(state) ?? 0 }));
  const others = [...counts.entries()].filter(([s]) => !order.includes(s)).map(([state, count]) => ({ state, count }));
  return { byState: [...known, ...others], errors, discovered, total: hosts.length };
}

/** Annotations discovery puts on a host it recorded (agent/discovery, docs/discovery.md). */
export const DISCOVERY_ANNOTATIONS = {
  discoveredAt: 'rackside.io/discovered-at',
  proposedBmcAddress: 'rackside.io/proposed-bmc-address',
} as const;

/**
 * True for a host discovery recorded that still waits for its BMC: annotated
 * `rackside.io/discovered-at`, `unmanaged`, no `spec.bmc` (the same rule as the agent's
 * discovery limit, agent/discovery/discovery-service.ts).
 */
export function isDiscovered(host: BareMetalHost): boolean {
  return host.metadata.annotations?.[DISCOVERY_ANNOTATIONS.discoveredAt] !== undefined
    && host.status.provisioning.state === 'unmanaged'
    && (host.spec.bmc?.address ?? '') === '';
}

/** The BMC address in-band enlistment proposed for a discovered host (`approve: manual`), or ''. */
export function proposedBmc(host: BareMetalHost): string {
  return host.metadata.annotations?.[DISCOVERY_ANNOTATIONS.proposedBmcAddress] ?? '';
}

/**
 * The switch and port a NIC is cabled to, from the LLDP neighbour its inspection heard (IEEE
 * 802.1AB §8.5: system name, else chassis ID; port ID): `leaf-1 / Ethernet12`, or '' without one.
 */
export function switchPort(nic: NIC): string {
  const lldp = nic.lldp;
  if (lldp === undefined) return '';
  const sw = lldp.switchSystemName ?? lldp.switchID ?? '';
  const port = lldp.portID ?? '';
  return sw === '' && port === '' ? '' : `${sw || '?'} / ${port || '?'}`;
}

/** The rack view's filters; an empty `state` means any state. */
export interface RackFilter {
  text: string;
  state: string;
  errorsOnly: boolean;
  /** Only hosts {@link isDiscovered} (absent: false). */
  discoveredOnly?: boolean;
}

/** The host's description: the `rackside.io/description` annotation, else `spec.description`. */
export function hostDescription(host: BareMetalHost): string {
  return host.metadata.annotations?.[DESCRIPTION_ANNOTATION] ?? host.spec.description ?? '';
}

/**
 * True when the host passes the filter. The text matches (case-insensitively) the name,
 * description, boot MAC, BMC address (or the proposed one), state, or error message.
 */
export function hostMatches(host: BareMetalHost, filter: RackFilter): boolean {
  if (filter.state !== '' && host.status.provisioning.state !== filter.state) return false;
  if (filter.errorsOnly && categoryOf(host) !== 'error') return false;
  if (filter.discoveredOnly === true && !isDiscovered(host)) return false;
  const needle = filter.text.trim().toLowerCase();
  if (needle === '') return true;
  const haystack = [
    host.metadata.name,
    hostDescription(host),
    host.spec.bootMACAddress ?? '',
    host.spec.bmc?.address ?? '',
    proposedBmc(host),
    stateLabel(host.status.provisioning.state),
    host.status.errorMessage,
  ].join('\n').toLowerCase();
  return haystack.includes(needle);
}

/** Formats a duration: `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 07 min`, `3 d 4 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 24 * 60) return `${Math.floor(totalMinutes / 60)} h ${String(totalMinutes % 60).padStart(2, '0')} min`;
  return `${Math.floor(totalMinutes / 1440)} d ${Math.floor((totalMinutes % 1440) / 60)} h`;
}

/** Milliseconds of an RFC 3339 time, or undefined when empty or unparseable. */
export function parseTimeMs(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** One row of the operation-history table. */
export interface OperationRow {
  operation: keyof OperationHistory;
  start: string;
  end: string;
  /** `12.3 s`, `running for 4 min 05 s`, or `—` when never run. */
  duration: string;
  running: boolean;
}

/** The four operations of `status.operationHistory` with their durations (running ones against `nowMs`). */
export function operationRows(history: OperationHistory, nowMs: number): OperationRow[] {
  return (['register', 'inspect', 'provision', 'deprovision'] as const).map((operation) => {
    const { start, end } = history[operation];
    const startMs = parseTimeMs(start);
    const endMs = parseTimeMs(end);
    const running = startMs !== undefined && endMs === undefined;
    let duration = '—';
    if (startMs !== undefined && endMs !== undefined) duration = formatDuration(endMs - startMs);
    else if (running) duration = `running for ${formatDuration(nowMs - startMs)}`;
    return { operation, start, end, duration, running };
  });
}

/** Sorts hosts by name (stable, locale-independent). */
export function sortHosts(hosts: readonly BareMetalHost[]): BareMetalHost[] {
  return [...hosts].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}
