/*
 * tftp_pump — the sending phase of TFTP read transfers on a thread of its own (Linux only), so
 * that the per-ACK work of every transfer leaves the event loop: the agent's HTTP, DHCP and API
 * answers no longer wait behind thousands of ACKs a second in a PXE storm, and a lock-step
 * transfer's ACK → DATA turn-around is a plain epoll_wait/recvmmsg/sendmsg loop, as in.tftpd's
 * select/recv/send, instead of a trip through libuv, N-API and V8 (docs/PERFORMANCE.md, TFTP).
 *
 * The JS reducer (bootsvc/tftp/transfer.ts) stays the one authority on what a transfer means.
 * The thread runs only its routine steps, with the same rules: an ACK inside the outstanding
 * window opens the next window right after it (RFC 7440 §4), duplicate and stray ACKs are
 * counted and never answered (RFC 1123 §4.2.3.1), the timer resends the outstanding window with
 * the adaptive, backed-off timeout (RFC 1123 §4.2.3.2; smoothed RTT of clean windows, Karn's
 * rule). Everything else it hands back, with the transfer's state, as the event the reducer
 * must decide: the final block's ACK, any datagram that is not an ACK, the client's port
 * unreachable (ICMP → ECONNREFUSED), the timer that would exceed the retry limit, a read error,
 * or a cancel from the event loop.
 *
 *   pumpStart(socketHandle, options, onReturn) -> pump handle
 *       Lends the connected socket (udp_connected.c: its polling stops until the return) and
 *       hands the transfer to the thread. options: the bytes, as `fd` (a file descriptor read
 *       with pread(2); duplicated, so the caller may close its own) or `bytes` (a Buffer, kept
 *       referenced); `sizeBytes`, `blockSize`, `windowSize`, `timeoutMs`, `minTimeoutMs`,
 *       `maxTimeoutMs`, `maxRetries`; and the reducer's state in phase "sending": `acked`,
 *       `sent` (absolute block numbers), `retries`, `deadlineInMs` (when the outstanding window
 *       times out, from now), `windowSentAgoMs`, `windowClean`, `srttMs` (negative: not
 *       measured yet) and the counters `dataPackets`, `retransmittedPackets`, `duplicateAcks`,
 *       `strayAcks`, `timeouts`. The outstanding window must already be on the wire: the thread
 *       starts by waiting for its ACK.
 *   onReturn(result), once, on the event loop: `reason` ("ack" with `block` as on the wire,
 *       "datagram" with `bytes` (a copy, at most UDP_RECV_SLOT_BYTES), "unreachable", "timer",
 *       "read-error" with `message`, "cancelled", or "refused" when the thread could not take
 *       the transfer) and the state fields as in options, relative to the moment of the
 *       return. The socket polls again before onReturn runs.
 *   pumpProgress(pump, out) fills a Float64Array of 7: acked, sent, dataPackets,
 *       retransmittedPackets, duplicateAcks, strayAcks, timeouts, as of the thread's last step.
 *   pumpCancel(pump): asks the thread to hand the transfer back ("cancelled"); a no-op once it
 *       has been handed back.
 *
 * One thread per Node environment serves every transfer through one epoll set, with a binary
 * heap of retransmission deadlines (each transfer holds at most one entry, moved earlier when
 * needed and left to fire early otherwise, as the JS run's timer). Bytes come from pread into
 * a 64 KiB read-ahead per transfer (a boot file is in the page cache; a cold read delays the
 * other transfers by that read), or straight from the Buffer. The thread runs under SCHED_BATCH
 * (native/thread_priority.h): its wake-ups never preempt the event loop mid-turn.
 */
#include "tftp_pump.h"
#include "udp_args.h"
#include "udp_connected.h"
#include "udp_batch.h"
#include "../thread_priority.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define EPOLL_EVENTS 64
/* Payload bytes read per round of datagrams from a file descriptor source, at most. */
#define SCRATCH_BYTES (1024 * 1024)
/* Read-ahead per transfer from a file descriptor: one pread per 64 KiB, not one per window
 * (a lock-step transfer at blksize 512 reads 128 blocks per call). */
#define READ_AHEAD_BYTES (64 * 1024)
#define PROGRESS_FIELDS 7

enum counter { DATA_PACKETS, RETRANSMITTED_PACKETS, DUPLICATE_ACKS, STRAY_ACKS, TIMEOUTS, COUNTERS };
static const char* const COUNTER_NAMES[COUNTERS] = {"dataPackets", "retransmittedPackets", "duplicateAcks", "strayAcks", "timeouts"};

enum reason { REASON_ACK, REASON_DATAGRAM, REASON_UNREACHABLE, REASON_TIMER, REASON_READ_ERROR, REASON_CANCELLED, REASON_REFUSED };
static const char* const REASON_NAMES[] = {"ack", "datagram", "unreachable", "timer", "read-error", "cancelled", "refused"};

static const napi_type_tag PUMP_TAG = {0x72636b7374667470ULL, 0x70756d705f763031ULL};

typedef struct pump_transfer {
  /* Fixed at the start. */
  int fd;
  int gso_usable;
  int file_fd;
  const unsigned char* bytes;
  /* Read-ahead of a file descriptor source: bytes [ahead_offset, ahead_offset + ahead_length). */
  unsigned char* ahead;
  uint64_t ahead_offset;
  size_t ahead_length;
  uint64_t size;
  uint32_t block_size;
  uint32_t window_size;
  uint32_t max_retries;
  double timeout_ms, min_timeout_ms, max_timeout_ms;
  uint64_t total_blocks;
  /* The reducer's state (thread-owned while pumping). */
  uint64_t acked, sent;
  uint32_t retries;
  double deadline, window_sent_at, srtt;
  int srtt_known, window_clean;
  uint64_t counters[COUNTERS];
  /* What pumpProgress reads (relaxed atomics). */
  double shown[PROGRESS_FIELDS];
  /* Timer heap slot. */
  size_t heap_index;
  double heap_at;
  int in_heap;
  /* Thread lists: the engine's active transfers, and the start / return queues. */
  struct pump_transfer *prev, *next, *queued;
  int cancel;         /* set by pumpCancel (atomic) */
  int handing_back;   /* thread: leaving */
  /* The return. */
  enum reason reason;
  uint32_t wire_block;
  uint32_t datagram_length;
  unsigned char datagram[UDP_RECV_SLOT_BYTES];
  char message[200];
  double returned_at;
  /* Event-loop side. */
  napi_ref self, on_return, socket_ref, bytes_ref;
  int returned, finalized;
} pump_transfer;

typedef struct pump_engine {
  pthread_t thread;
  int epoll_fd, wake_fd;
  pthread_mutex_t lock;
  pump_transfer* starts; /* guarded by lock */
  int cancels;           /* guarded by lock */
  int quit;              /* guarded by lock */
  napi_threadsafe_function tsfn;
  uint32_t running; /* event loop: transfers handed over and not returned */
  /* Thread-only. */
  pump_transfer** heap;
  size_t heap_length, heap_capacity;
  pump_transfer* active;
  pump_transfer* returning;
  unsigned char* scratch;
  unsigned char receive[UDP_RECV_SLOTS * UDP_RECV_SLOT_BYTES];
  uint32_t receive_lengths[UDP_RECV_SLOTS];
} pump_engine;

/* Wakes the thread (its eventfd; a full counter already wakes it). */
static void wake(pump_engine* e) {
  uint64_t one = 1;
  if (write(e->wake_fd, &one, sizeof one) < 0) { /* the counter is already non-zero */ }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* ---- timer heap (thread) ---------------------------------------------------------------- */

static void heap_place(pump_engine* e, size_t i, pump_transfer* t) {
  e->heap[i] = t;
  t->heap_index = i;
}

static void heap_up(pump_engine* e, size_t i) {
  pump_transfer* t = e->heap[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (e->heap[parent]->heap_at <= t->heap_at) break;
    heap_place(e, i, e->heap[parent]);
    i = parent;
  }
  heap_place(e, i, t);
}

static void heap_down(pump_engine* e, size_t i) {
  pump_transfer* t = e->heap[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= e->heap_length) break;
    if (child + 1 < e->heap_length && e->heap[child + 1]->heap_at < e->heap[child]->heap_at) child++;
    if (e->heap[child]->heap_at >= t->heap_at) break;
    heap_place(e, i, e->heap[child]);
    i = child;
  }
  heap_place(e, i, t);
}

static void heap_remove(pump_engine* e, pump_transfer* t) {
  if (!t->in_heap) return;
  t->in_heap = 0;
  size_t i = t->heap_index;
  pump_transfer* last = e->heap[--e->heap_length];
  if (last == t) return;
  heap_place(e, i, last);
  heap_up(e, i);
  heap_down(e, last->heap_index);
}

/* Arms the transfer's timer for `deadline`: an entry that fires no later is kept (it re-arms when early). */
static void arm(pump_engine* e, pump_transfer* t, double deadline) {
  t->deadline = deadline;
  if (t->in_heap) {
    if (t->heap_at <= deadline) return;
    t->heap_at = deadline;
    heap_up(e, t->heap_index);
    return;
  }
  if (e->heap_length == e->heap_capacity) {
    size_t capacity = e->heap_capacity == 0 ? 64 : e->heap_capacity * 2;
    pump_transfer** grown = realloc(e->heap, capacity * sizeof *grown);
    if (grown == NULL) return; /* no timer: the client's own retransmission still drives it */
    e->heap = grown;
    e->heap_capacity = capacity;
  }
  t->in_heap = 1;
  t->heap_at = deadline;
  heap_place(e, e->heap_length++, t);
  heap_up(e, t->heap_index);
}

/* ---- the transfer's steps (thread), mirroring bootsvc/tftp/transfer.ts ------------------ */

static void publish(pump_transfer* t) {
  double values[PROGRESS_FIELDS] = {(double)t->acked, (double)t->sent, (double)t->counters[DATA_PACKETS], (double)t->counters[RETRANSMITTED_PACKETS],
                                    (double)t->counters[DUPLICATE_ACKS], (double)t->counters[STRAY_ACKS], (double)t->counters[TIMEOUTS]};
  for (int i = 0; i < PROGRESS_FIELDS; i++) __atomic_store(&t->shown[i], &values[i], __ATOMIC_RELAXED);
}

/* Hands the transfer back to the event loop (posted at the end of the thread's turn). */
static void hand_back(pump_engine* e, pump_transfer* t, enum reason reason, double now) {
  if (t->handing_back) return;
  t->handing_back = 1;
  t->reason = reason;
  t->returned_at = now;
  heap_remove(e, t);
  epoll_ctl(e->epoll_fd, EPOLL_CTL_DEL, t->fd, NULL);
  close(t->fd);
  t->fd = -1;
  if (t->file_fd >= 0) close(t->file_fd);
  t->file_fd = -1;
  free(t->ahead);
  t->ahead = NULL;
  t->ahead_length = 0;
  if (t->prev != NULL) t->prev->next = t->next;
  else if (e->active == t) e->active = t->next;
  if (t->next != NULL) t->next->prev = t->prev;
  t->prev = t->next = NULL;
  publish(t);
  t->queued = e->returning;
  e->returning = t;
}

/* transfer.ts currentTimeoutMs: adaptive unless the client fixed it, doubled per retry. */
static double current_timeout(const pump_transfer* t) {
  double measured = t->srtt_known ? ceil(4 * t->srtt) : t->timeout_ms;
  double base = fmin(t->max_timeout_ms, fmax(t->min_timeout_ms, measured));
  return fmin(t->max_timeout_ms, base * ldexp(1.0, t->retries < 30 ? (int)t->retries : 30));
}

static int read_fully(int fd, unsigned char* into, size_t length, uint64_t offset, char* message, size_t message_size) {
  size_t filled = 0;
  while (filled < length) {
    ssize_t n = pread(fd, into + filled, length - filled, (off_t)(offset + filled));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      snprintf(message, message_size, "read error: %s", strerror(errno));
      return 0;
    }
    if (n == 0) {
      snprintf(message, message_size, "read error: file shrank while being served: ended at byte %llu", (unsigned long long)(offset + filled));
      return 0;
    }
    filled += (size_t)n;
  }
  return 1;
}

/*
 * The file's bytes [offset, offset + span) from a file descriptor source: from the read-ahead
 * when they lie in it, else read — the read-ahead refilled from `offset` when the span fits it,
 * the engine's scratch buffer otherwise. NULL after a read error (message set).
 */
static const unsigned char* file_span(pump_engine* e, pump_transfer* t, uint64_t offset, size_t span) {
  if (t->ahead != NULL && offset >= t->ahead_offset && offset + span <= t->ahead_offset + t->ahead_length) return t->ahead + (offset - t->ahead_offset);
  if (span > READ_AHEAD_BYTES) return read_fully(t->file_fd, e->scratch, span, offset, t->message, sizeof t->message) ? e->scratch : NULL;
  if (t->ahead == NULL && (t->ahead = malloc(READ_AHEAD_BYTES)) == NULL) {
    return read_fully(t->file_fd, e->scratch, span, offset, t->message, sizeof t->message) ? e->scratch : NULL;
  }
  uint64_t left = t->size - offset;
  size_t want = left < READ_AHEAD_BYTES ? (size_t)left : READ_AHEAD_BYTES;
  t->ahead_length = 0;
  if (!read_fully(t->file_fd, t->ahead, want, offset, t->message, sizeof t->message)) return NULL;
  t->ahead_offset = offset;
  t->ahead_length = want;
  return t->ahead;
}

/*
 * Sends DATA for absolute blocks first…last in rounds (transfer-run.ts sendBlocks). A round the
 * send buffer cannot take is lost, as on the event loop: the timer recovers it. Returns
 * REASON_READ_ERROR or REASON_UNREACHABLE to hand back, or -1.
 */
static int send_blocks(pump_engine* e, pump_transfer* t, uint64_t first, uint64_t last) {
  uint32_t segment = 4 + t->block_size;
  uint32_t limit = udp_send_round_limit(segment, t->gso_usable);
  uint32_t by_scratch = SCRATCH_BYTES / t->block_size;
  if (t->bytes == NULL && by_scratch < limit) limit = by_scratch == 0 ? 1 : by_scratch;
  unsigned char headers[UDP_SEND_MAX_BATCH][4];
  struct iovec iov[UDP_SEND_MAX_BATCH * 2];
  size_t lengths[UDP_SEND_MAX_BATCH];
  int unreachable = 0;
  for (uint64_t block = first; block <= last;) {
    uint32_t count = last - block + 1 < limit ? (uint32_t)(last - block + 1) : limit;
    uint64_t offset = (block - 1) * t->block_size;
    size_t span = 0;
    for (uint32_t i = 0; i < count; i++) {
      uint64_t at = offset + (uint64_t)i * t->block_size;
      uint64_t length = at >= t->size ? 0 : (t->size - at < t->block_size ? t->size - at : t->block_size);
      lengths[i] = (size_t)length + 4;
      span += (size_t)length;
    }
    const unsigned char* base = t->bytes != NULL ? t->bytes + offset : e->scratch;
    if (t->bytes == NULL && span > 0 && (base = file_span(e, t, offset, span)) == NULL) return REASON_READ_ERROR;
    for (uint32_t i = 0; i < count; i++) {
      uint32_t wire = (uint32_t)((block + i) & 0xffff);
      headers[i][0] = 0;
      headers[i][1] = 3; /* DATA, RFC 1350 §5 */
      headers[i][2] = (unsigned char)(wire >> 8);
      headers[i][3] = (unsigned char)(wire & 0xff);
      iov[2 * i].iov_base = headers[i];
      iov[2 * i].iov_len = 4;
      iov[2 * i + 1].iov_base = (void*)(base + (size_t)i * t->block_size);
      iov[2 * i + 1].iov_len = lengths[i] - 4;
    }
    int n = udp_send_round(t->fd, &t->gso_usable, iov, 2, count, segment, lengths, NULL);
    if (n == -ECONNREFUSED) unreachable = 1;
    block += count;
  }
  return unreachable ? REASON_UNREACHABLE : -1;
}

/* transfer.ts sendWindow: the window after block `from`; blocks up to `sent` are resent. */
static void send_window(pump_engine* e, pump_transfer* t, uint64_t from, double now, uint32_t retries) {
  uint64_t first = from + 1;
  uint64_t last = from + t->window_size < t->total_blocks ? from + t->window_size : t->total_blocks;
  uint64_t resent_last = last < t->sent ? last : t->sent;
  uint64_t resent = resent_last >= first ? resent_last - first + 1 : 0;
  t->acked = from;
  if (last > t->sent) t->sent = last;
  t->retries = retries;
  t->counters[DATA_PACKETS] += last - first + 1;
  t->counters[RETRANSMITTED_PACKETS] += resent;
  t->window_sent_at = now;
  t->window_clean = resent == 0;
  arm(e, t, now + current_timeout(t));
  int back = send_blocks(e, t, first, last);
  if (back >= 0) hand_back(e, t, (enum reason)back, now);
}

static void on_ack(pump_engine* e, pump_transfer* t, uint32_t wire, double now) {
  uint64_t block = t->acked + ((wire - (uint32_t)(t->acked & 0xffff)) & 0xffff);
  if (block == t->acked) {
    t->counters[DUPLICATE_ACKS]++;
  } else if (block > t->sent) {
    t->counters[STRAY_ACKS]++;
  } else if (block == t->total_blocks) {
    t->wire_block = wire;
    hand_back(e, t, REASON_ACK, now);
  } else {
    if (t->window_clean) {
      double sample = fmax(0, now - t->window_sent_at);
      t->srtt = t->srtt_known ? t->srtt + (sample - t->srtt) / 8 : sample;
      t->srtt_known = 1;
    }
    send_window(e, t, block, now, 0);
  }
}

static void on_timer(pump_engine* e, pump_transfer* t, double now) {
  if (now < t->deadline) {
    arm(e, t, t->deadline);
  } else if (t->retries + 1 > t->max_retries) {
    hand_back(e, t, REASON_TIMER, now);
  } else {
    t->counters[TIMEOUTS]++;
    send_window(e, t, t->acked, now, t->retries + 1);
  }
}

static void on_readable(pump_engine* e, pump_transfer* t, uint32_t events, double now) {
  if (events & EPOLLERR) {
    int err = 0;
    socklen_t length = sizeof err;
    if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &length) == 0 && err == ECONNREFUSED) {
      hand_back(e, t, REASON_UNREACHABLE, now);
      return;
    }
  }
  for (int round = 0; round < UDP_RECV_MAX_ROUNDS && !t->handing_back; round++) {
    int n = udp_recv_slots(t->fd, e->receive, e->receive_lengths);
    if (n < 0) {
      if (n == -ECONNREFUSED) hand_back(e, t, REASON_UNREACHABLE, now);
      break;
    }
    for (int i = 0; i < n && !t->handing_back; i++) {
      const unsigned char* p = e->receive + (size_t)i * UDP_RECV_SLOT_BYTES;
      uint32_t length = e->receive_lengths[i];
      if (length >= 4 && p[0] == 0 && p[1] == 4) {
        on_ack(e, t, ((uint32_t)p[2] << 8) | p[3], now);
      } else {
        /* Not an ACK: the reducer decides (an ERROR ends the transfer; the rest is counted). */
        memcpy(t->datagram, p, length);
        t->datagram_length = length;
        hand_back(e, t, REASON_DATAGRAM, now);
      }
    }
    if (n < UDP_RECV_SLOTS) break;
  }
  if (!t->handing_back) publish(t);
}

static void take_over(pump_engine* e, pump_transfer* t, double now) {
  struct epoll_event event;
  memset(&event, 0, sizeof event);
  event.events = EPOLLIN;
  event.data.ptr = t;
  /* The relative times the event loop gave become this clock's. */
  t->deadline = now + t->deadline;
  t->window_sent_at = now - t->window_sent_at;
  t->next = e->active;
  if (e->active != NULL) e->active->prev = t;
  e->active = t;
  if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, t->fd, &event) != 0) {
    hand_back(e, t, REASON_REFUSED, now);
    return;
  }
  arm(e, t, t->deadline);
}

/* Takes the queued starts and cancels; returns 1 when the thread must stop. */
static int take_commands(pump_engine* e, double now) {
  uint64_t drained;
  while (read(e->wake_fd, &drained, sizeof drained) > 0) continue;
  pthread_mutex_lock(&e->lock);
  pump_transfer* starts = e->starts;
  e->starts = NULL;
  int cancels = e->cancels;
  e->cancels = 0;
  int quit = e->quit;
  pthread_mutex_unlock(&e->lock);
  /* The queue is newest first; take the oldest first. */
  pump_transfer* ordered = NULL;
  while (starts != NULL) {
    pump_transfer* next = starts->queued;
    starts->queued = ordered;
    ordered = starts;
    starts = next;
  }
  while (ordered != NULL) {
    pump_transfer* t = ordered;
    ordered = t->queued;
    t->queued = NULL;
    take_over(e, t, now);
  }
  if (cancels) {
    for (pump_transfer* t = e->active; t != NULL;) {
      pump_transfer* next = t->next;
      if (__atomic_load_n(&t->cancel, __ATOMIC_RELAXED)) hand_back(e, t, REASON_CANCELLED, now);
      t = next;
    }
  }
  return quit;
}

static void post_returns(pump_engine* e) {
  while (e->returning != NULL) {
    pump_transfer* t = e->returning;
    e->returning = t->queued;
    t->queued = NULL;
    napi_call_threadsafe_function(e->tsfn, t, napi_tsfn_nonblocking);
  }
}

static void* pump_main(void* arg) {
  make_bulk_thread();
  pump_engine* e = arg;
  struct epoll_event events[EPOLL_EVENTS];
  int quit = 0;
  while (!quit) {
    int timeout = -1;
    if (e->heap_length > 0) {
      double wait = ceil(e->heap[0]->heap_at - now_ms());
      timeout = wait <= 0 ? 0 : (wait > INT_MAX ? INT_MAX : (int)wait);
    }
    int n = epoll_wait(e->epoll_fd, events, EPOLL_EVENTS, timeout);
    if (n < 0) n = 0; /* EINTR */
    double now = now_ms();
    for (int i = 0; i < n; i++) {
      pump_transfer* t = events[i].data.ptr;
      if (t == NULL) quit = take_commands(e, now);
      else if (!t->handing_back) on_readable(e, t, events[i].events, now);
    }
    while (e->heap_length > 0 && e->heap[0]->heap_at <= now) {
      pump_transfer* t = e->heap[0];
      heap_remove(e, t);
      on_timer(e, t, now);
      if (!t->handing_back) publish(t);
    }
    post_returns(e);
  }
  for (pump_transfer* t = e->active; t != NULL; t = t->next) {
    close(t->fd);
    if (t->file_fd >= 0) close(t->file_fd);
    free(t->ahead);
    t->ahead = NULL;
  }
  return NULL;
}

/* ---- event-loop side ---------------------------------------------------------------------- */

static void set_number(napi_env env, napi_value object, const char* name, double value) {
  napi_value v;
  napi_create_double(env, value, &v);
  napi_set_named_property(env, object, name, v);
}

static void delete_ref(napi_env env, napi_ref* ref) {
  if (*ref != NULL) napi_delete_reference(env, *ref);
  *ref = NULL;
}

static napi_value result_of(napi_env env, pump_transfer* t) {
  napi_value result, v;
  napi_create_object(env, &result);
  napi_create_string_utf8(env, REASON_NAMES[t->reason], NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, result, "reason", v);
  if (t->reason == REASON_ACK) set_number(env, result, "block", t->wire_block);
  if (t->reason == REASON_DATAGRAM) {
    void* copy = NULL;
    if (napi_create_buffer_copy(env, t->datagram_length, t->datagram, &copy, &v) == napi_ok) napi_set_named_property(env, result, "bytes", v);
  }
  if (t->reason == REASON_READ_ERROR) {
    napi_create_string_utf8(env, t->message, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, result, "message", v);
  }
  set_number(env, result, "acked", (double)t->acked);
  set_number(env, result, "sent", (double)t->sent);
  set_number(env, result, "retries", t->retries);
  set_number(env, result, "deadlineInMs", t->deadline - t->returned_at);
  set_number(env, result, "windowSentAgoMs", t->returned_at - t->window_sent_at);
  napi_get_boolean(env, t->window_clean, &v);
  napi_set_named_property(env, result, "windowClean", v);
  set_number(env, result, "srttMs", t->srtt_known ? t->srtt : -1);
  for (int i = 0; i < COUNTERS; i++) set_number(env, result, COUNTER_NAMES[i], (double)t->counters[i]);
  return result;
}

static void call_return(napi_env env, napi_value js_callback, void* context, void* data) {
  (void)js_callback;
  pump_transfer* t = data;
  if (env == NULL) return; /* torn down: the transfer's few bytes go with the process */
  pump_engine* e = context;
  napi_value socket = NULL, fn = NULL, self = NULL, result;
  if (t->socket_ref != NULL) napi_get_reference_value(env, t->socket_ref, &socket);
  if (socket != NULL) udp_connected_resume(env, socket, t->gso_usable);
  result = result_of(env, t);
  if (t->on_return != NULL) napi_get_reference_value(env, t->on_return, &fn);
  if (t->self != NULL) napi_get_reference_value(env, t->self, &self);
  delete_ref(env, &t->on_return);
  delete_ref(env, &t->socket_ref);
  delete_ref(env, &t->bytes_ref);
  delete_ref(env, &t->self);
  /* From here the handle's finalizer frees `t` (it may run during the call below): not touched again. */
  t->returned = 1;
  if (--e->running == 0) napi_unref_threadsafe_function(env, e->tsfn);
  if (fn != NULL) {
    napi_value recv, ignored;
    if (self == NULL) napi_get_global(env, &self);
    recv = self;
    if (napi_call_function(env, recv, fn, 1, &result, &ignored) == napi_pending_exception) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
      napi_fatal_exception(env, err);
    }
  }
}

static void finalize_pump(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  pump_transfer* t = data;
  t->finalized = 1;
  if (t->returned) free(t);
}

static void stop_engine(void* arg) {
  pump_engine* e = arg;
  pthread_mutex_lock(&e->lock);
  e->quit = 1;
  pthread_mutex_unlock(&e->lock);
  wake(e);
  pthread_join(e->thread, NULL);
  napi_release_threadsafe_function(e->tsfn, napi_tsfn_abort);
  close(e->epoll_fd);
  close(e->wake_fd);
  pthread_mutex_destroy(&e->lock);
  free(e->heap);
  free(e->scratch);
  free(e);
}

static pump_engine* engine_of(napi_env env) {
  void* data = NULL;
  if (napi_get_instance_data(env, &data) == napi_ok && data != NULL) return data;
  pump_engine* e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  e->scratch = malloc(SCRATCH_BYTES);
  e->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct epoll_event event;
  memset(&event, 0, sizeof event);
  event.events = EPOLLIN;
  event.data.ptr = NULL;
  napi_value name = NULL;
  napi_create_string_utf8(env, "rackside:tftp-pump", NAPI_AUTO_LENGTH, &name);
  int ok = e->scratch != NULL && e->epoll_fd >= 0 && e->wake_fd >= 0 && epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, e->wake_fd, &event) == 0 &&
           napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, e, call_return, &e->tsfn) == napi_ok;
  if (ok) {
    napi_unref_threadsafe_function(env, e->tsfn);
    pthread_mutex_init(&e->lock, NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    ok = pthread_create(&e->thread, &attributes, pump_main, e) == 0;
    pthread_attr_destroy(&attributes);
    if (ok) pthread_setname_np(e->thread, "rackside-tftp"); /* top -H, /proc/PID/task/TID/comm */
    if (!ok) {
      pthread_mutex_destroy(&e->lock);
      napi_release_threadsafe_function(e->tsfn, napi_tsfn_abort);
    }
  }
  if (!ok || napi_set_instance_data(env, e, NULL, NULL) != napi_ok) {
    if (e->epoll_fd >= 0) close(e->epoll_fd);
    if (e->wake_fd >= 0) close(e->wake_fd);
    free(e->scratch);
    free(e);
    return NULL;
  }
  /* Registered after the threadsafe function, so it runs before that function's own teardown. */
  napi_add_env_cleanup_hook(env, stop_engine, e);
  return e;
}

static int get_double(napi_env env, napi_value object, const char* name, double min, double max, double* out) {
  double value;
  if (napi_get_value_double(env, get_named(env, object, name), &value) != napi_ok || !(value >= min && value <= max)) return 0;
  *out = value;
  return 1;
}

static pump_transfer* unwrap_pump(napi_env env, napi_value handle) {
  bool tagged = false;
  void* data = NULL;
  if (napi_check_object_type_tag(env, handle, &PUMP_TAG, &tagged) != napi_ok || !tagged || napi_unwrap(env, handle, &data) != napi_ok || data == NULL) {
    throw_code(env, "ERR_INVALID_ARG", "not a pump handle");
    return NULL;
  }
  return data;
}

/* Reads the options into `t`; returns NULL or the name of the first bad one. */
static const char* read_options(napi_env env, napi_value options, pump_transfer* t, napi_value* bytes_value) {
  static const double MAX_SAFE = 9007199254740991.0;
  double v, fd = -1;
  if (!get_double(env, options, "sizeBytes", 0, MAX_SAFE, &v)) return "sizeBytes";
  t->size = (uint64_t)v;
  if (!get_double(env, options, "blockSize", 8, 65464, &v)) return "blockSize";
  t->block_size = (uint32_t)v;
  if (!get_double(env, options, "windowSize", 1, 65535, &v)) return "windowSize";
  t->window_size = (uint32_t)v;
  if (!get_double(env, options, "timeoutMs", 1, 3600e3, &t->timeout_ms)) return "timeoutMs";
  if (!get_double(env, options, "minTimeoutMs", 1, 3600e3, &t->min_timeout_ms)) return "minTimeoutMs";
  if (!get_double(env, options, "maxTimeoutMs", 1, 3600e3, &t->max_timeout_ms)) return "maxTimeoutMs";
  if (!get_double(env, options, "maxRetries", 0, 1000, &v)) return "maxRetries";
  t->max_retries = (uint32_t)v;
  t->total_blocks = t->size / t->block_size + 1;
  if (!get_double(env, options, "acked", 0, (double)t->total_blocks, &v)) return "acked";
  t->acked = (uint64_t)v;
  if (!get_double(env, options, "sent", (double)t->acked, (double)t->total_blocks, &v)) return "sent";
  t->sent = (uint64_t)v;
  if (!get_double(env, options, "retries", 0, 1000, &v)) return "retries";
  t->retries = (uint32_t)v;
  /* Relative until the thread takes the transfer over (take_over). */
  if (!get_double(env, options, "deadlineInMs", -3600e3, 3600e3, &t->deadline)) return "deadlineInMs";
  if (!get_double(env, options, "windowSentAgoMs", 0, 3600e3, &t->window_sent_at)) return "windowSentAgoMs";
  if (!get_double(env, options, "srttMs", -1, 3600e3, &t->srtt)) return "srttMs";
  t->srtt_known = t->srtt >= 0;
  bool clean = false;
  if (napi_get_value_bool(env, get_named(env, options, "windowClean"), &clean) != napi_ok) return "windowClean";
  t->window_clean = clean;
  for (int i = 0; i < COUNTERS; i++) {
    if (!get_double(env, options, COUNTER_NAMES[i], 0, MAX_SAFE, &v)) return COUNTER_NAMES[i];
    t->counters[i] = (uint64_t)v;
  }
  *bytes_value = get_named(env, options, "bytes");
  void* data = NULL;
  size_t length = 0;
  if (get_buffer(env, *bytes_value, &data, &length)) {
    if (length < t->size) return "bytes";
    t->bytes = data;
  } else if (!get_double(env, options, "fd", 0, INT_MAX, &fd)) {
    return "fd";
  }
  t->file_fd = (int)fd;
  return NULL;
}

static napi_value js_pump_start(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3 || !is_function(env, argv[2])) return throw_code(env, "ERR_INVALID_ARG", "pumpStart(socketHandle, options, onReturn)");
  pump_transfer* t = calloc(1, sizeof *t);
  if (t == NULL) return throw_errno(env, ENOMEM, "pumpStart");
  t->fd = -1;
  napi_value bytes_value = NULL;
  const char* bad = read_options(env, argv[1], t, &bytes_value);
  if (bad != NULL) {
    free(t);
    char message[96];
    snprintf(message, sizeof message, "pumpStart: option %s is missing or out of range", bad);
    return throw_code(env, "ERR_INVALID_ARG", message);
  }
  pump_engine* e = engine_of(env);
  if (e == NULL) {
    free(t);
    return throw_code(env, "ERR_PUMP_UNAVAILABLE", "the TFTP transfer thread could not start");
  }
  if (t->bytes == NULL) {
    t->file_fd = fcntl(t->file_fd, F_DUPFD_CLOEXEC, 0);
    if (t->file_fd < 0) {
      int err = errno;
      free(t);
      return throw_errno(env, err, "dup(fd)");
    }
  }
  t->fd = udp_connected_lend(env, argv[0], &t->gso_usable);
  if (t->fd < 0) {
    if (t->file_fd >= 0) close(t->file_fd);
    free(t);
    return NULL;
  }
  napi_value handle;
  napi_create_object(env, &handle);
  if (napi_wrap(env, handle, t, finalize_pump, NULL, NULL) != napi_ok || napi_type_tag_object(env, handle, &PUMP_TAG) != napi_ok) {
    udp_connected_resume(env, argv[0], t->gso_usable);
    close(t->fd);
    if (t->file_fd >= 0) close(t->file_fd);
    free(t);
    return throw_code(env, "ERR_INTERNAL", "napi_wrap failed");
  }
  napi_create_reference(env, handle, 1, &t->self);
  napi_create_reference(env, argv[2], 1, &t->on_return);
  napi_create_reference(env, argv[0], 1, &t->socket_ref);
  if (t->bytes != NULL) napi_create_reference(env, bytes_value, 1, &t->bytes_ref);
  publish(t);
  if (e->running++ == 0) napi_ref_threadsafe_function(env, e->tsfn);
  pthread_mutex_lock(&e->lock);
  t->queued = e->starts;
  e->starts = t;
  pthread_mutex_unlock(&e->lock);
  wake(e);
  return handle;
}

/* The pump handle of a call's first argument (argv gets up to 2 arguments); NULL after throwing `usage`. */
static pump_transfer* pump_argument(napi_env env, napi_callback_info info, size_t needed, napi_value* argv, const char* usage) {
  size_t argc = 2;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < needed) {
    throw_code(env, "ERR_INVALID_ARG", usage);
    return NULL;
  }
  return unwrap_pump(env, argv[0]);
}

static napi_value js_pump_progress(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  pump_transfer* t = pump_argument(env, info, 2, argv, "pumpProgress(pump, Float64Array(7))");
  if (t == NULL) return NULL;
  napi_typedarray_type type;
  size_t length = 0;
  void* data = NULL;
  if (napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_float64_array || length < PROGRESS_FIELDS) {
    return throw_code(env, "ERR_INVALID_ARG", "pumpProgress needs a Float64Array of 7");
  }
  double* out = data;
  for (int i = 0; i < PROGRESS_FIELDS; i++) __atomic_load(&t->shown[i], &out[i], __ATOMIC_RELAXED);
  return NULL;
}

static napi_value js_pump_cancel(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  pump_transfer* t = pump_argument(env, info, 1, argv, "pumpCancel(pump)");
  if (t == NULL || t->returned) return NULL;
  pump_engine* e = engine_of(env);
  if (e == NULL) return NULL;
  __atomic_store_n(&t->cancel, 1, __ATOMIC_RELAXED);
  pthread_mutex_lock(&e->lock);
  e->cancels = 1;
  pthread_mutex_unlock(&e->lock);
  wake(e);
  return NULL;
}

void tftp_pump_register(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"pumpStart", NULL, js_pump_start, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pumpProgress", NULL, js_pump_progress, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pumpCancel", NULL, js_pump_cancel, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
}
