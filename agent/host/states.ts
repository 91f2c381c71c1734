/**
 * @module The BareMetalHost provisioning-state transition table as data
 * (docs/metal3-mapping.md, "States"). The state machine may only make transitions listed here (a test checks every
 * transition it observes); docs/host-states.dot is rendered from it.
 * @pure
 */
import type { ProvisioningState } from './types.js';

/** One allowed transition and why it happens. */
export interface Transition {
  from: ProvisioningState;
  to: ProvisioningState;
  when: string;
}

/** Every transition of the host state machine. */
export const TRANSITIONS: readonly Transition[] = [
  { from: '', to: 'registering', when: 'BMC details present' },
  { from: '', to: 'unmanaged', when: 'no BMC details (discovered)' },
  { from: '', to: 'deleting', when: 'deleted' },
  { from: 'unmanaged', to: 'registering', when: 'BMC details added' },
  { from: 'unmanaged', to: 'deleting', when: 'deleted' },
  { from: 'registering', to: 'inspecting', when: 'registered' },
  { from: 'registering', to: 'preparing', when: 'registered, inspection disabled' },
  { from: 'registering', to: 'externally provisioned', when: 'registered, externallyProvisioned' },
  { from: 'registering', to: 'deleting', when: 'deleted' },
  { from: 'inspecting', to: 'preparing', when: 'inspection done' },
  { from: 'inspecting', to: 'powering off before delete', when: 'deleted' },
  { from: 'match profile', to: 'preparing', when: 'legacy state' },
  { from: 'match profile', to: 'powering off before delete', when: 'deleted' },
  { from: 'preparing', to: 'available', when: 'prepared' },
  { from: 'preparing', to: 'powering off before delete', when: 'deleted' },
  { from: 'ready', to: 'available', when: 'deprecated alias' },
  { from: 'ready', to: 'powering off before delete', when: 'deleted' },
  { from: 'available', to: 'provisioning', when: 'image or customDeploy set, online' },
  { from: 'available', to: 'inspecting', when: 'inspect annotation' },
  { from: 'available', to: 'preparing', when: 'root device hints, RAID, BIOS settings or firmware changed' },
  { from: 'available', to: 'externally provisioned', when: 'externallyProvisioned set' },
  { from: 'available', to: 'powering off before delete', when: 'deleted' },
  { from: 'provisioning', to: 'provisioned', when: 'image written, booted' },
  { from: 'provisioning', to: 'deprovisioning', when: 'provisioning error or cancelled, or deleted' },
  { from: 'provisioning', to: 'deleting', when: 'deleted while detached' },
  { from: 'provisioned', to: 'deprovisioning', when: 'image removed or changed, or deleted' },
  { from: 'provisioned', to: 'deleting', when: 'deleted while detached' },
  { from: 'externally provisioned', to: 'provisioned', when: 'externallyProvisioned cleared' },
  { from: 'externally provisioned', to: 'powering off before delete', when: 'deleted' },
  { from: 'externally provisioned', to: 'deleting', when: 'deleted while detached' },
  { from: 'available', to: 'deleting', when: 'deleted while detached' },
  { from: 'deprovisioning', to: 'available', when: 'deprovisioned' },
  { from: 'deprovisioning', to: 'powering off before delete', when: 'deprovisioned (or gave up) while deleting' },
  { from: 'deprovisioning', to: 'deleting', when: 'deleting, registration failing, or no credentials' },
  { from: 'powering off before delete', to: 'deleting', when: 'powered off (or gave up)' },
];

/** States where power is managed and the host waits for the user (spec.online enforced). */
export const STEADY_STATES: readonly ProvisioningState[] = ['available', 'ready', 'provisioned', 'externally provisioned'];

/** States whose entry needs provisioning capacity (upstream `ensureCapacity`). */
export const CAPACITY_GATED_STATES: readonly ProvisioningState[] = ['inspecting', 'provisioning', 'deprovisioning'];

/** True when `from → to` is in {@link TRANSITIONS}. */
export function isAllowedTransition(from: ProvisioningState, to: ProvisioningState): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.to === to);
}

/** Renders the table as Graphviz dot (docs/host-states.dot). */
export function renderStateDiagram(): string {
  const label = (s: ProvisioningState): string => (s === '' ? 'none' : s);
  const lines = [
    '// Generated from agent/host/states.ts by test/unit/host/states.test.ts; do not edit.',
    'digraph BareMetalHostProvisioningState {',
    '  rankdir=TB;',
    '  node [shape=box, style=rounded];',
  ];
  for (const state of STEADY_STATES) lines.push(`  "${label(state)}" [style="rounded,bold"];`);
  for (const t of TRANSITIONS) lines.push(`  "${label(t.from)}" -> "${label(t.to)}" [label="${t.when}"];`);
  lines.push('}');
  return lines.join('\n') + '\n';
}
