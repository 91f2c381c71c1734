/**
 * @module What a command from the fleet controller does on this agent (docs/controller.md,
 * "Commands"): the same {@link ManagementBackend} calls, with the same validation, as the
 * management API's routes — `apply` is `POST /api/v1/apply` with a YAML body, `power-on`,
 * `power-off`, `reboot`, `inspect` and `detach` are the host actions, `delete` is `DELETE
 * /api/v1/hosts/NAME`. A host named in another namespace than the command's is not touched.
 */
import type { FleetCommand } from '../../wire/index.js';
import type { CommandRunOutcome } from '../sync/command-executor.js';
import type { HostAction, ManagementBackend } from './backend.js';
import { decodeManifests } from './manifests.js';

function actionOf(kind: FleetCommand['kind']): HostAction | undefined {
  switch (kind) {
    case 'power-on': return { action: 'power-on' };
    case 'power-off': return { action: 'power-off' };
    case 'reboot': return { action: 'reboot', mode: 'soft' };
    case 'inspect': return { action: 'inspect' };
    case 'detach': return { action: 'detach' };
    default: return undefined;
  }
}

/** Runs fleet commands through `backend`; a refusal (validation, not found, conflict) is a `failed` outcome with the API's message. */
export function createFleetCommandRunner(backend: Pick<ManagementBackend, 'apply' | 'getHost' | 'deleteHost' | 'hostAction'>): (command: FleetCommand) => Promise<CommandRunOutcome> {
  return async (command) => {
    try {
      if (command.kind === 'apply') {
        const outcomes = await backend.apply(decodeManifests('yaml', command.manifest ?? ''));
        return { outcome: 'done', message: outcomes.map((o) => `${o.kind}/${o.name} ${o.action}`).join(', ') };
      }
      const ref = command.host;
      if (ref === undefined) return { outcome: 'failed', message: `${command.kind} names no host` };
      const host = await backend.getHost(ref.name);
      const namespace = host.metadata.namespace;
      if (namespace !== ref.namespace) return { outcome: 'failed', message: `BareMetalHost "${ref.name}" is in namespace ${namespace}, not ${ref.namespace}` };
      if (command.kind === 'delete') {
        await backend.deleteHost(ref.name);
        return { outcome: 'done', message: `BareMetalHost ${ref.namespace}/${ref.name} deletion requested` };
      }
      const action = actionOf(command.kind);
      if (action === undefined) return { outcome: 'failed', message: `unknown command kind ${command.kind}` };
      await backend.hostAction(ref.name, action);
      return { outcome: 'done', message: `BareMetalHost ${ref.namespace}/${ref.name}: ${command.kind} requested` };
    } catch (err) {
      return { outcome: 'failed', message: err instanceof Error ? err.message : String(err) };
    }
  };
}
