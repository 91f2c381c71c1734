/**
 * @module The parameter block a ramdisk operation sends with its command (images'
 * `RamdiskCommand`): `deploy` its DeployParams, `clean` its mode (metadata by default), `raid`
 * its software RAID volumes (prep-steps.ts queues `raid` for software RAID while preparing).
 * The heartbeat answer (ramdisk-service.ts) spreads this into `encodeRamdiskCommand`, which
 * validates every field before anything is sent.
 * @pure
 */
import type { RamdiskCommand, RamdiskCommandName } from '../../../images/index.js';
import type { NodeOperation } from './node.js';

/** Returns the parameters of `command` for operation `op` (empty for commands without any). */
export function ramdiskCommandParams(op: NodeOperation, command: RamdiskCommandName): Pick<RamdiskCommand, 'deploy' | 'clean' | 'raid'> {
  switch (command) {
    case 'deploy':
      return op.deploy === undefined ? {} : { deploy: op.deploy };
    case 'clean':
      return { clean: op.clean ?? { mode: 'metadata' } };
    case 'raid':
      return op.raid === undefined ? {} : { raid: op.raid };
    default:
      return {};
  }
}
