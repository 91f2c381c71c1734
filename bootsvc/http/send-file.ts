/**
 * @module Sends one open file as an HTTP response per the plan of range.ts (status, validators,
 * Range/If-Range, HEAD), counting the body bytes for the flight recorder. The descriptor is the
 * caller's (the open-file cache's): it is only read with positioned reads (`pread`), never
 * closed here, and no read is in flight once the returned promise settles.
 *
 * Bodies of at most {@link SMALL_BODY_BYTES} (boot scripts, iPXE/GRUB binaries, the 64 KiB
 * ranges of image clients) are one positioned read into a pooled buffer and one `end()`.
 * Larger bodies (kernels, initrds, whole images) go in {@link STREAM_CHUNK_BYTES} reads into
 * a bounded pool of reused buffers — a ReadStream allocates a fresh buffer per chunk, and every
 * fresh page is a page fault: reusing them cut the server CPU per GiB by about a third
 * (test/bench/http.bench.ts; 256 KiB to 1 MiB chunks measured alike, 512 KiB keeps two per
 * response) — with the next read in flight while the socket drains the previous chunk, and
 * backpressure from the socket (`drain`). Node has no sendfile: every byte is copied twice
 * (page cache → buffer → socket), which bounds throughput against nginx (docs/PERFORMANCE.md).
 * With a {@link KernelSender} (the optional native addon, kernel-send.ts), a body of at most
 * 1 MiB whose pages are cached goes by sendfile(2) instead, and only what the socket did not
 * take at once (a full send buffer) comes this way, after it; a larger body goes whole by
 * sendfile from the addon's sender threads, off the event loop (kernel-send.ts), unless the
 * responses are paced (`pacer`: the threads send at the socket's rate, so paced bodies keep
 * to the chunked path that asks the pacer chunk by chunk).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readAt } from '../file-read.js';
import { SENDFILE_MAX_BYTES, type KernelSender } from './kernel-send.js';
import { contentTypeFor, planFileResponse, type FileFacts, type FileRequestHeaders } from './range.js';
import type { BytePacer } from './send-pacer.js';

/** An open file to answer from: its descriptor and the facts the validators come from. */
export interface OpenFile extends FileFacts {
  readonly fd: number;
}

/** What was sent. */
export interface SentFile {
  status: number;
  /** Body bytes handed to the socket. */
  bytes: number;
  contentRange?: string;
  /** False when the client went away before the body was complete. */
  completed: boolean;
  /**
   * Set while the body is with the addon's sender threads: settles (never rejects) once the
   * thread is done and `bytes` is final — which can be after the response closed (a socket
   * closed by Node cancels the job, and a sendfile call in flight still adds its bytes).
   */
  settled?: Promise<void>;
}

/** Bodies up to this size are read whole and sent with one `end()`. */
export const SMALL_BODY_BYTES = 256 * 1024;

/** The read size for larger bodies. */
export const STREAM_CHUNK_BYTES = 512 * 1024;

/** Bodies up to this size use a fresh buffer (Node's own pool serves the smallest). */
const TINY_BODY_BYTES = 16 * 1024;

/** Free buffers of one size, reused across responses; at most `keep` are held. */
class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(readonly size: number, private readonly keep: number) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  /** Returns a buffer no write or read references any more. */
  give(buffer: Buffer): void {
    if (this.free.length < this.keep) this.free.push(buffer);
  }
}

const smallBuffers = new BufferPool(SMALL_BODY_BYTES, 16);
const streamBuffers = new BufferPool(STREAM_CHUNK_BYTES, 16);

const CONDITIONAL_HEADERS = ['range', 'if-range', 'if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since'] as const;

function requestHeaders(req: IncomingMessage): FileRequestHeaders {
  const out: FileRequestHeaders = {};
  for (const name of CONDITIONAL_HEADERS) {
    const value = req.headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Reads `length` bytes at `position` into `buffer`; resolves with fewer only when the file is shorter. */
async function readFully(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const n = await readAt(fd, buffer, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** Resolves when `res` can take more (`drain`) or is gone (`close`), whichever comes first. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Answers `req` with `file` (served under `name`, which picks the Content-Type). `sent` is
 * updated as the response goes — status and Content-Range at once, bytes as they are handed to
 * the socket, `completed` when the last byte was — so a `close` listener on `res` sees the
 * facts. The promise settles once the whole body has been read and handed to `res` (or the
 * response was given up): no read of `file` is in flight any more and the caller may release
 * it, while the socket may still be sending. A file that turns out shorter than its planned
 * body (truncated under us) destroys the response: the client sees a truncated transfer rather
 * than waiting for the promised Content-Length. With `pacer` (governor.httpMbps) every body
 * chunk waits for its turn at the shared rate (send-pacer.ts) before it goes to the socket.
 * With `kernel`, a small body whose pages are cached goes by sendfile(2) (kernel-send.ts),
 * and only what the socket did not take at once follows through `res`; an unpaced body over
 * 1 MiB goes by the addon's sender threads and the promise settles when they are done.
 */
export async function sendFile(req: IncomingMessage, res: ServerResponse, file: OpenFile, name: string, sent: SentFile = { status: 0, bytes: 0, completed: false }, pacer?: BytePacer, kernel?: KernelSender): Promise<SentFile> {
  const plan = planFileResponse(req.method ?? 'GET', requestHeaders(req), file, contentTypeFor(name));
  res.statusCode = plan.status;
  const contentRange = plan.headers['Content-Range'];
  sent.status = plan.status;
  if (contentRange !== undefined) sent.contentRange = contentRange;
  const finished = (): void => {
    sent.completed = true;
  };
  if (plan.body === undefined) {
    res.writeHead(plan.status, plan.headers);
    res.end(finished);
    return sent;
  }
  // A client gone before the answer started: nothing to send.
  if (res.destroyed) return sent;
  const { end } = plan.body;
  let start = plan.body.start;
  const small = end - start + 1 <= SMALL_BODY_BYTES;
  if (small && pacer !== undefined) await pacer.pace(end - start + 1);
  // Large unpaced bodies: whole by the sender threads; the promise settles once the thread is
  // done, so the caller keeps the descriptor until then (the thread also holds its own dup).
  if (kernel !== undefined && pacer === undefined && end - start + 1 > SENDFILE_MAX_BYTES && kernel.largeBodies) {
    const job = kernel.sendLarge(res, file.fd, start, end - start + 1, () => {
      res.writeHead(plan.status, plan.headers);
    }, (result) => {
      sent.bytes = result.bytes;
    });
    if (job !== undefined) {
      sent.settled = job.then(() => undefined);
      const result = await job;
      // An error destroyed the socket already (kernel-send.ts); else an empty end() completes
      // the response and keep-alive goes on, as after the small sendfile path.
      if (result.errno === 0) res.end(finished);
      return sent;
    }
  }
  // Paced bodies over SMALL_BODY_BYTES keep to the streamed path, which paces chunk by chunk.
  if (kernel !== undefined && (small || pacer === undefined)) {
    const byKernel = kernel.send(res, file.fd, start, end - start + 1, () => {
      res.writeHead(plan.status, plan.headers);
    });
    if (byKernel !== undefined) {
      sent.bytes = byKernel;
      start += byKernel;
      if (start > end) {
        // All of it went by sendfile: an empty end() completes the response (no Content-Length
        // check: strictContentLength is off, kernel-send.ts) and keep-alive goes on as usual.
        res.end(finished);
        return sent;
      }
    }
  }
  // The rest (all of it without sendfile) through Node, after any bytes sendfile sent.
  const length = end - start + 1;
  if (length <= SMALL_BODY_BYTES) {
    await sendSmallBody(res, file.fd, start, length, plan, sent);
  } else {
    if (!res.headersSent) res.writeHead(plan.status, plan.headers);
    if (await streamBody(res, file.fd, start, end + 1, sent, pacer)) res.end(finished);
  }
  return sent;
}

async function sendSmallBody(res: ServerResponse, fd: number, start: number, length: number, plan: { status: number; headers: Record<string, string> }, sent: SentFile): Promise<void> {
  const pooled = length > TINY_BODY_BYTES ? smallBuffers.take() : undefined;
  const body = pooled === undefined ? Buffer.allocUnsafe(length) : pooled.subarray(0, length);
  const got = await readFully(fd, body, length, start).catch(() => -1);
  if (got !== length || res.destroyed) {
    if (pooled !== undefined) smallBuffers.give(pooled);
    res.destroy();
    return;
  }
  // The headers are out already when sendfile sent the first part of the body.
  if (!res.headersSent) res.writeHead(plan.status, plan.headers);
  sent.bytes += length;
  res.end(body, () => {
    // 'finish': the socket has taken every byte; the buffer is free again.
    sent.completed = true;
    if (pooled !== undefined) smallBuffers.give(pooled);
  });
}

interface Chunk {
  buffer: Buffer;
  bytes: number;
}

function readChunk(fd: number, position: number, length: number): Promise<Chunk> {
  const buffer = streamBuffers.take();
  return readAt(fd, buffer, 0, length, position).then(
    (bytes) => ({ buffer, bytes }),
    (err: unknown) => {
      streamBuffers.give(buffer);
      throw err;
    },
  );
}

/**
 * Writes bytes [position, stop) of `fd` to `res` with one read ahead, honouring backpressure;
 * true when all were handed over (the caller ends `res`), false when the response was destroyed.
 */
async function streamBody(res: ServerResponse, fd: number, position: number, stop: number, sent: SentFile, pacer?: BytePacer): Promise<boolean> {
  let next: Promise<Chunk> | undefined = readChunk(fd, position, Math.min(STREAM_CHUNK_BYTES, stop - position));
  try {
    while (next !== undefined) {
      const chunk: Chunk = await next;
      next = undefined;
      if (pacer !== undefined) await pacer.pace(chunk.bytes);
      if (chunk.bytes === 0 || res.destroyed) {
        // A file cut short under us, or a client gone.
        streamBuffers.give(chunk.buffer);
        res.destroy();
        return false;
      }
      position += chunk.bytes;
      if (position < stop) next = readChunk(fd, position, Math.min(STREAM_CHUNK_BYTES, stop - position));
      sent.bytes += chunk.bytes;
      const more = res.write(chunk.bytes === chunk.buffer.length ? chunk.buffer : chunk.buffer.subarray(0, chunk.bytes), (err) => {
        // Written to the socket: reuse. On an error the buffer is just dropped.
        if (err === null || err === undefined) streamBuffers.give(chunk.buffer);
      });
      if (!more && next !== undefined) await writable(res);
    }
    return true;
  } catch {
    // The file could not be read (EIO…): the client sees a broken transfer.
    res.destroy();
    return false;
  } finally {
    // Never leave a read of the caller's descriptor in flight.
    if (next !== undefined) {
      const pending = await next.catch(() => undefined);
      if (pending !== undefined) streamBuffers.give(pending.buffer);
    }
  }
}
