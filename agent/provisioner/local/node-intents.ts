/**
 * @module The local provisioner's side of the boot-intent seam (agent/boot/boot-intent.ts): what
 * each host should boot, read from its `nodes` entry, and its ramdisk token, created through the
 * node table (so the ramdisk API's token index knows every token).
 */
import type { BootIntentQuery, BootIntentSource, RamdiskIntent } from '../../boot/boot-intent.js';
import type { RandomBytes } from '../../boot/ramdisk-token.js';
import { decodeRamdiskIntent } from './node.js';
import type { NodeTable } from './node-table.js';

/** {@link BootIntentSource} over the local provisioner's {@link NodeTable}. */
export class NodeBootIntents implements BootIntentSource {
  /** `random`: the source of tokens created here (default crypto). */
  constructor(private readonly nodes: NodeTable, private readonly random?: RandomBytes) {}

  /** {@inheritDoc BootIntentSource.intent} */
  async intent(query: BootIntentQuery): Promise<RamdiskIntent> {
    return decodeRamdiskIntent(await this.nodes.get(query.uid));
  }

  /** {@inheritDoc BootIntentSource.ensureToken} */
  ensureToken(uid: string): Promise<string> {
    return this.nodes.ensureToken(uid, this.random);
  }
}
