/**
 * @module A time budget per event-loop turn for request handling, shared by DHCP, TFTP and boot
 * HTTP. Node runs every callback that is ready in one phase of its loop, and timers only between
 * phases: when 500 machines power on together, their DISCOVERs, TFTP requests or script GETs
 * arrive within milliseconds, and handling them all in one phase held every timer in the process
 * (retransmissions, lease expiry, heartbeats, the management API) for 100 ms and more.
 *
 * {@link TurnBudget.enter} lets a request handler go on at once while the current turn has spent
 * less than the budget on handlers; past it, the handler waits, first come first served, and is
 * let in from a timer — so every timer that fell due meanwhile runs first, and each later turn
 * again lets in work for about one budget. Nothing is dropped and the order of arrival is kept;
 * a quiet server pays one clock read per request.
 */

/** Options of {@link TurnBudget}. */
export interface TurnBudgetOptions {
  /** Milliseconds of handling per turn before later requests wait for the next turn (default 4). */
  budgetMs?: number;
  /** Monotonic clock in milliseconds (default `performance.now`). */
  now?: () => number;
}

const ADMITTED: Promise<void> = Promise.resolve();

/** Stats of a {@link TurnBudget}: how often handlers had to wait. */
export interface TurnBudgetStats {
  /** Handlers let in, at once or after waiting. */
  admitted: number;
  /** Handlers that waited for a later turn (counted in `admitted` too once let in). */
  deferred: number;
  /** Handlers waiting now. */
  waiting: number;
}

/** See the module comment. One instance is shared by every server of a process. */
export class TurnBudget {
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #waiting: (() => void)[] = [];
  /** When the current turn's first handler started; undefined until one does. */
  #turnStartedAt: number | undefined;
  #endTurnPending = false;
  #drainPending = false;
  #admitted = 0;
  #deferred = 0;

  constructor(options: TurnBudgetOptions = {}) {
    const budgetMs = options.budgetMs ?? 4;
    if (!(budgetMs > 0) || !Number.isFinite(budgetMs)) throw new RangeError(`budgetMs must be a positive number of milliseconds, got ${String(budgetMs)}`);
    this.#budgetMs = budgetMs;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Resolves at once while this turn has spent less than the budget and nobody is waiting;
   * otherwise in a later turn, after the handlers that waited before. Never rejects.
   */
  enter(): Promise<void> {
    const now = this.#now();
    this.#startTurn(now);
    if (this.#waiting.length === 0 && now - (this.#turnStartedAt ?? now) < this.#budgetMs) {
      this.#admitted += 1;
      return ADMITTED;
    }
    this.#deferred += 1;
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#scheduleDrain();
    });
  }

  stats(): TurnBudgetStats {
    return { admitted: this.#admitted, deferred: this.#deferred, waiting: this.#waiting.length };
  }

  /** Marks the turn's start; the check phase at the end of this loop iteration forgets it. */
  #startTurn(now: number): void {
    if (this.#turnStartedAt !== undefined) return;
    this.#turnStartedAt = now;
    if (this.#endTurnPending) return;
    this.#endTurnPending = true;
    setImmediate(() => {
      this.#endTurnPending = false;
      this.#turnStartedAt = undefined;
    });
  }

  /** Lets waiters in from the next timers phase (a 1 ms timer: after the timers already due). */
  #scheduleDrain(): void {
    if (this.#drainPending) return;
    this.#drainPending = true;
    setTimeout(() => {
      this.#drainPending = false;
      this.#turnStartedAt = undefined;
      this.#startTurn(this.#now());
      this.#letIn();
    }, 0);
  }

  /** Lets one waiter in; once its handler has run up to its first wait, the next if the budget allows. */
  #letIn(): void {
    const next = this.#waiting.shift();
    if (next === undefined) return;
    this.#admitted += 1;
    next();
    if (this.#waiting.length === 0) return;
    // Queued behind the handler's continuation, so the clock is read after its synchronous part.
    queueMicrotask(() => {
      if (this.#now() - (this.#turnStartedAt ?? 0) < this.#budgetMs) this.#letIn();
      else this.#scheduleDrain();
    });
  }
}
