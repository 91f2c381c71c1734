/**
 * @module A value built once on first use and kept: the LevelDB store's event index and its
 * parsed hosts are each built by one scan when first asked for, then kept in step by the writes
 * that follow (which look at {@link LazyBuild.value} and skip the update while it is unbuilt).
 * A build that fails is forgotten, so the next call tries again.
 * @pure
 */

/** See the module comment. */
export class LazyBuild<T> {
  #building: Promise<T> | undefined;
  /** The built value, once a build finished; writes keep it current from then on. */
  value: T | undefined;

  /** The value, building it with `build` (at most one build at a time) when there is none yet. */
  get(build: () => Promise<T>): Promise<T> {
    if (this.#building === undefined) {
      const building = build().then((value) => {
        this.value = value;
        return value;
      });
      building.catch(() => { if (this.#building === building) this.#building = undefined; });
      this.#building = building;
    }
    return this.#building;
  }
}
