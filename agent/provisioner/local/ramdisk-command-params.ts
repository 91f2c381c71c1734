/**
 * @module The parameter block a ramdisk operation sends with its command (images'
 * `RamdiskCommand`): `deploy` its DeployParams, `clean` its mode (metadata by default), `raid`
 * its software RAID volumes (prep-steps.ts queues `raid` for software RAID while preparing).
 * The heartbeat answer (ramdisk-service.ts) spreads this into `encodeRamdiskCommand`, which
 * validates every field before anything is sent.
 * @pure
 */
import type { DeployParams, RamdiskCommand, RamdiskCommandName } from '../../../images/index.js';
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

/** Boot HTTP's plain and TLS base URLs (`http://…:<port>`, `https://…:<tlsPort>`). */
export interface BootBases {
  plain: string;
  tls: string;
}

/**
 * `params` for a ramdisk that calls over TLS: a deploy's image and config drive URLs under
 * `bases.plain` are moved under `bases.tls` (the same routes are on both listeners), so nothing
 * it fetches crosses the network in clear text. A URL elsewhere is left as it is: the ramdisk
 * refuses any URL whose scheme is not its rackside.url's (images/ramdisk/lib-deploy.sh).
 */
export function overTls(params: Pick<RamdiskCommand, 'deploy' | 'clean' | 'raid'>, bases: BootBases): Pick<RamdiskCommand, 'deploy' | 'clean' | 'raid'> {
  const deploy: DeployParams | undefined = params.deploy;
  if (deploy === undefined) return params;
  const plain = `${bases.plain.replace(/\/+$/, '')}/`;
  const move = (url: string): string => (url.startsWith(plain) ? `${bases.tls.replace(/\/+$/, '')}/${url.slice(plain.length)}` : url);
  const moved: DeployParams = { ...deploy, imageUrl: move(deploy.imageUrl) };
  if (deploy.configDrive !== undefined) moved.configDrive = { ...deploy.configDrive, url: move(deploy.configDrive.url) };
  return { ...params, deploy: moved };
}
