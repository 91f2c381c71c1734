/**
 * @module Live updates over Server-Sent Events (`GET /api/v1/events/stream`, WHATWG HTML
 * §9.2). The stream is resumed with `?after=<last seq seen>` — the query form of
 * `Last-Event-ID`, which a fresh EventSource cannot send — so no event is lost across a
 * reconnect. Reconnection is ours rather than the browser's: EventSource gives up for good on
 * an HTTP error (a proxy's 502 while the agent restarts), so every error closes it and a new
 * one opens after an exponential backoff with jitter (1 s doubling to 30 s). The topbar shows
 * the connection state.
 */
import type { StoredEvent } from '../../../store/types.js';

/** Connection states shown in the topbar. */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'offline';

/** Options of {@link LiveStream}. */
export interface LiveStreamOptions {
  /** Resume after this sequence number (the newest event the page already has). */
  afterSeq: number;
  onEvent: (event: StoredEvent) => void;
  /** Called when the stream opens again after a failure: the page reloads its data. */
  onReconnected: () => void;
}

const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
const OFFLINE_AFTER_ATTEMPTS = 4;

function isStoredEvent(value: unknown): value is StoredEvent {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.seq === 'number' && typeof v.time === 'string' && typeof v.reason === 'string' && typeof v.message === 'string' && typeof v.source === 'string';
}

/** Shows a connection state in the topbar's live region. */
export function showLiveState(state: LiveState, text: string): void {
  const element = document.getElementById('live-status');
  if (element === null) return;
  element.dataset.state = state;
  const label = element.querySelector('.live-text');
  if (label !== null) label.textContent = text;
}

/** One page's event stream with reconnect (see the module comment). */
export class LiveStream {
  #source: EventSource | undefined;
  #lastSeq: number;
  #attempt = 0;
  #timer: number | undefined;
  #opened = false;
  #failedSinceOpen = false;
  readonly #options: LiveStreamOptions;

  constructor(options: LiveStreamOptions) {
    this.#options = options;
    this.#lastSeq = options.afterSeq;
  }

  /** The newest sequence number received. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Opens the stream. */
  start(): void {
    showLiveState('connecting', 'Connecting…');
    this.#connect();
  }

  /** Closes the stream and cancels a pending reconnect. */
  stop(): void {
    window.clearTimeout(this.#timer);
    this.#source?.close();
    this.#source = undefined;
  }

  #connect(): void {
    const source = new EventSource(`/api/v1/events/stream?after=${this.#lastSeq}`);
    this.#source = source;
    source.addEventListener('open', () => {
      this.#attempt = 0;
      showLiveState('live', 'Live');
      if (this.#opened && this.#failedSinceOpen) this.#options.onReconnected();
      this.#opened = true;
      this.#failedSinceOpen = false;
    });
    source.addEventListener('event', (message: MessageEvent<string>) => {
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!isStoredEvent(event) || event.seq <= this.#lastSeq) return;
      this.#lastSeq = event.seq;
      this.#options.onEvent(event);
    });
    source.addEventListener('error', () => {
      source.close();
      if (this.#source !== source) return;
      this.#source = undefined;
      this.#failedSinceOpen = true;
      this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** this.#attempt);
    const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.#attempt += 1;
    const seconds = Math.max(1, Math.round(delayMs / 1000));
    if (this.#attempt > OFFLINE_AFTER_ATTEMPTS) showLiveState('offline', `Agent unreachable, retrying in ${seconds} s`);
    else showLiveState('reconnecting', `Reconnecting in ${seconds} s…`);
    window.clearTimeout(this.#timer);
    this.#timer = window.setTimeout(() => {
      showLiveState(this.#attempt > OFFLINE_AFTER_ATTEMPTS ? 'offline' : 'reconnecting', 'Reconnecting…');
      this.#connect();
    }, delayMs);
  }
}
