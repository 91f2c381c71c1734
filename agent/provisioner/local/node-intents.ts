/**
 * @module The local provisioner's side of the boot-intent seam (agent/boot/boot-intent.ts): what
 * each host should boot, read from its `nodes` entry, and its ramdisk token, created through the
 * node table (so the ramdisk API's token index knows every token).
 */
import type { BootIntentQuery, BootIntentSource, RamdiskIntent } from '../../boot/boot-intent.js';
import type { ClientArch } from '../../../bootsvc/index.js';
import type { RandomBytes } from '../../boot/ramdisk-token.js';
import { decodeRamdiskIntent } from './node.js';
import type { NodeTable } from './node-table.js';

/** {@link BootIntentSource} over the local provisioner's {@link NodeTable}. */
export class NodeBootIntents implements BootIntentSource {
  /** The client architecture each host's firmware last told (DHCP option 93), by uid; in memory, as small as the host list. */
  readonly #clientArch = new Map<string, ClientArch>();

  /** `random`: the source of tokens created here (default crypto). */
  constructor(private readonly nodes: NodeTable, private readonly random?: RandomBytes) {}

  /** {@inheritDoc BootIntentSource.intent} Remembers the client architecture the question carries. */
  async intent(query: BootIntentQuery): Promise<RamdiskIntent> {
    if (query.arch !== undefined && query.arch !== 'unknown') this.#clientArch.set(query.uid, query.arch);
    return decodeRamdiskIntent(await this.nodes.get(query.uid));
  }

  /** The client architecture host `uid`'s firmware last told in a boot question, if any since the agent started. */
  clientArch(uid: string): ClientArch | undefined {
    return this.#clientArch.get(uid);
  }

  /** {@inheritDoc BootIntentSource.ensureToken} */
  ensureToken(uid: string): Promise<string> {
    return this.nodes.ensureToken(uid, this.random);
  }
}
