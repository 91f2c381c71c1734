/**
 * @module The local provisioner's capacity counter: the network-booting hosts busy inspecting,
 * provisioning or deprovisioning, kept from what the reconciler tells each step's provisioner
 * (the host's provisioning state) and from the places it grants. `hasCapacity` reads it instead
 * of scanning every host. Upstream semantics (metal3 `HasCapacity`): virtual-media hosts are
 * unlimited and never counted; a host already counted keeps its place (or busy hosts over the
 * limit would wait on each other forever); otherwise the busy hosts must stay below the limit.
 * @pure
 */
import type { ProvisioningState } from '../../host/types.js';

const BUSY_STATES: ReadonlySet<ProvisioningState> = new Set<ProvisioningState>(['inspecting', 'provisioning', 'deprovisioning']);

/** Hosts (by uid) counted against the provisioning limit. */
export class BusyHosts {
  readonly #counted = new Set<string>();

  constructor(private readonly limit: number) {}

  /** How many hosts are counted now. */
  get size(): number {
    return this.#counted.size;
  }

  /**
   * Notes host `uid`'s stored provisioning state at the start of a step: a network-booting host
   * in a busy state is counted, any other is not (this also drops a grant whose transition did
   * not land).
   */
  note(uid: string, state: ProvisioningState, virtualMedia: boolean): void {
    if (!virtualMedia && BUSY_STATES.has(state)) this.#counted.add(uid);
    else this.#counted.delete(uid);
  }

  /**
   * Whether host `uid` may be (or stay) busy now; a grant counts it at once, as the host enters
   * its busy state in the same step.
   */
  admit(uid: string, virtualMedia: boolean): boolean {
    if (virtualMedia || this.#counted.has(uid)) return true;
    if (this.#counted.size >= this.limit) return false;
    this.#counted.add(uid);
    return true;
  }

  /** Stops counting host `uid` (deleted or detached). */
  forget(uid: string): void {
    this.#counted.delete(uid);
  }
}
