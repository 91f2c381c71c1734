/**
 * @module Which event sequence numbers a filtered event listing reads: an in-memory index of
 * the stored events' seqs by host name and by MAC, so `GET /hosts/NAME/events` and a boot
 * timeline read their own ≤ `limit` events instead of scanning the whole log (up to 20 000
 * events) newest first. The log drops its oldest events first, so the index never deletes: a
 * seq below the log's oldest is stale and skipped, and each list sheds its stale head when that
 * head grows large.
 * @pure
 */
import type { NormalizedFilter } from './event-log.js';
import type { StoredEvent } from './types.js';

/** Seqs of one host's or one MAC's events, ascending; entries before `start` are dropped. */
interface SeqList {
  seqs: number[];
  start: number;
}

function push(index: Map<string, SeqList>, key: string, seq: number): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, { seqs: [seq], start: 0 });
  else list.seqs.push(seq);
}

/** First position in `seqs` (from `from`) whose seq is greater than `after`. */
function firstAfter(seqs: readonly number[], from: number, after: number): number {
  let lo = from;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((seqs[mid] ?? 0) > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The seqs of the stored events by host and by MAC (see the module comment). */
export class EventIndex {
  readonly #byHost = new Map<string, SeqList>();
  readonly #byMac = new Map<string, SeqList>();
  #addsSinceSweep = 0;

  /**
   * Records `event` (already numbered, MAC lower-cased); events must come in ascending seq.
   * Every `sweepEvery` adds, every list sheds the seqs below `oldestSeq` (the log's oldest
   * stored seq), so hosts and MACs seen once (a PXE storm of unknown clients) are forgotten
   * once their events are dropped: memory stays proportional to the stored events.
   */
  add(event: Pick<StoredEvent, 'seq' | 'host' | 'mac'>, oldestSeq: number, sweepEvery = 8192): void {
    if (event.host !== undefined) push(this.#byHost, event.host, event.seq);
    if (event.mac !== undefined) push(this.#byMac, event.mac, event.seq);
    this.#addsSinceSweep += 1;
    if (this.#addsSinceSweep < sweepEvery) return;
    this.#addsSinceSweep = 0;
    for (const index of [this.#byHost, this.#byMac]) {
      for (const [key, list] of [...index]) this.#shed(index, key, list, oldestSeq);
    }
  }

  /**
   * The seqs a listing with `filter` returns, ascending: the newest `filter.limit` of the events
   * matching its host and MAC with seq > `filter.afterSeq`, among the stored seqs
   * `oldestSeq..lastSeq`. The caller reads them and keeps the ones still stored.
   */
  select(filter: NormalizedFilter, oldestSeq: number, lastSeq: number): number[] {
    const after = Math.max(filter.afterSeq, oldestSeq - 1);
    if (filter.limit === 0 || after >= lastSeq) return [];
    if (filter.host === undefined && filter.mac === undefined) {
      const first = Math.max(after + 1, lastSeq - filter.limit + 1);
      return Array.from({ length: lastSeq - first + 1 }, (_, i) => first + i);
    }
    const lists: SeqList[] = [];
    for (const [index, key] of [[this.#byHost, filter.host], [this.#byMac, filter.mac]] as const) {
      if (key === undefined) continue;
      const list = index.get(key);
      if (list === undefined) return [];
      this.#shed(index, key, list, oldestSeq);
      lists.push(list);
    }
    const [shortest, other] = lists.sort((a, b) => (a.seqs.length - a.start) - (b.seqs.length - b.start));
    if (shortest === undefined) return [];
    const out: number[] = [];
    const begin = firstAfter(shortest.seqs, shortest.start, after);
    for (let i = shortest.seqs.length - 1; i >= begin && out.length < filter.limit; i--) {
      const seq = shortest.seqs[i] ?? 0;
      if (seq > lastSeq) continue;
      if (other === undefined || this.#contains(other, seq)) out.push(seq);
    }
    return out.reverse();
  }

  #contains(list: SeqList, seq: number): boolean {
    const at = firstAfter(list.seqs, list.start, seq - 1);
    return list.seqs[at] === seq;
  }

  /** Moves `list.start` past seqs the log no longer holds; compacts (or forgets) the list when that head is large. */
  #shed(index: Map<string, SeqList>, key: string, list: SeqList, oldestSeq: number): void {
    list.start = firstAfter(list.seqs, list.start, oldestSeq - 1);
    if (list.start === list.seqs.length) {
      index.delete(key);
    } else if (list.start > 64 && list.start * 2 > list.seqs.length) {
      list.seqs = list.seqs.slice(list.start);
      list.start = 0;
    }
  }

  /** How many keys are indexed (hosts + MACs), for tests. */
  get size(): number {
    return this.#byHost.size + this.#byMac.size;
  }
}
