/**
 * @module The firmware part of `rackside describe host` (HostFirmwareSettings, HostFirmwareComponents,
 * HostUpdatePolicy, FirmwareSchema from `GET /api/v1/hosts/{name}/firmware`) and the resource
 * names `rackside apply` prints for every kind.
 * @pure
 */
import type { Condition, HostFirmware } from '../host/firmware-types.js';
import { renderFields, renderTable } from './table.js';

/** kubectl's `<resource>.<group>` (or `secret`) for an applied kind. */
export function resourceOfKind(kind: string): string {
  switch (kind) {
    case 'BareMetalHost':
      return 'baremetalhost.metal3.io';
    case 'HostFirmwareSettings':
      return 'hostfirmwaresettings.metal3.io';
    case 'HostFirmwareComponents':
      return 'hostfirmwarecomponents.metal3.io';
    case 'HostUpdatePolicy':
      return 'hostupdatepolicy.metal3.io';
    case 'BMCEventSubscription':
      return 'bmceventsubscription.metal3.io';
    default:
      return kind.toLowerCase();
  }
}

/** `ChangeDetected=True, Valid=False (ConfigurationError: …)`. */
function conditionsText(conditions: readonly Condition[] | undefined): string {
  if (conditions === undefined || conditions.length === 0) return '<none>';
  return conditions
    .map((c) => `${c.type}=${c.status}${c.status === 'False' && c.message !== '' ? ` (${c.reason}: ${c.message})` : ''}`)
    .join(', ');
}

/** The `Firmware:` section of `describe host`; empty when the host has no firmware objects. */
export function renderFirmwareSection(firmware: HostFirmware): string {
  const { hostFirmwareSettings: hfs, hostFirmwareComponents: hfc, hostUpdatePolicy: hup, firmwareSchema: schema } = firmware;
  if (hfs === null && hfc === null && hup === null) return '';
  let text = 'Firmware:\n';
  const policy = hup === null ? '<none> (no servicing)' : `firmwareSettings=${hup.spec.firmwareSettings ?? '<none>'}, firmwareUpdates=${hup.spec.firmwareUpdates ?? '<none>'}`;
  text += renderFields([
    ['Update Policy', policy],
    ['BIOS Schema', schema === null ? '<none>' : `${schema.metadata.name} (${Object.keys(schema.spec.schema).length} attributes)`],
    ['Settings', hfs === null ? '<none>' : conditionsText(hfs.status.conditions)],
    ['Components', hfc === null ? '<none>' : conditionsText(hfc.status.conditions)],
  ], '  ');
  const wanted = Object.entries(hfs?.spec.settings ?? {});
  if (hfs !== null && wanted.length > 0) {
    text += '  BIOS Settings:\n' + renderTable(['NAME', 'WANTED', 'CURRENT'], wanted.map(([name, value]) => [name, String(value), hfs.status.settings[name] ?? '<not reported>']), '    ');
  }
  const components = hfc?.status.components ?? [];
  if (hfc !== null && (components.length > 0 || hfc.spec.updates.length > 0)) {
    const handed = new Map((hfc.status.updates ?? []).map((u) => [u.component, u.url]));
    const names = [...new Set([...components.map((c) => c.component), ...hfc.spec.updates.map((u) => u.component)])];
    text += '  Firmware Components:\n' + renderTable(['COMPONENT', 'CURRENT', 'INITIAL', 'UPDATE'], names.map((name) => {
      const c = components.find((x) => x.component === name);
      const update = hfc.spec.updates.find((u) => u.component === name);
      const state = update === undefined ? '' : handed.get(name) === update.url ? `${update.url} (handed over)` : `${update.url} (pending)`;
      return [name, c?.currentVersion ?? '', c?.initialVersion ?? '', state];
    }), '    ');
  }
  return text;
}
