/*
 * sendfile_range — sends a byte range of an open file to a TCP socket with sendfile(2), for the
 * boot HTTP server's small bodies (bootsvc/http/kernel-send.ts; Linux only). Node has no
 * sendfile: a body read through libuv is copied page cache → buffer on a pool thread, then
 * buffer → socket on the event loop, with a pool hand-off (futex + eventfd) per read. sendfile
 * moves the pages inside the kernel ("Because this copying is done within the kernel,
 * sendfile() is more efficient than the combination of read(2) and write(2)", sendfile(2)).
 *
 * It runs on the event loop, so it must never wait for a disk: a sendfile of pages that are not
 * in the page cache reads them synchronously (sendfile has no non-blocking mode for its input).
 * The caller asks rangeCached first, and uses its ordinary read path (a libuv pool thread,
 * which also warms the cache) when the answer is not CACHED.
 *
 *   rangeCached(fileFd, offset, count, method) -> status
 *       Whether bytes [offset, offset + count) of fileFd are in the page cache: CACHED (1),
 *       NOT_CACHED (0: a page is not cached, or the file ends before the range does) or
 *       UNKNOWN (-1: neither check works for this file: no cachestat and no RWF_NOWAIT).
 *       method 0 asks cachestat(2) (Linux >= 6.5: one call, an exact page count over the
 *       range) and falls back to probes where it is missing or refused; method 1 probes only
 *       (tests): a one-byte preadv2(2) with RWF_NOWAIT ("return instantly if it would have to
 *       read data from the backing storage", Linux >= 4.14; EAGAIN when a page is not cached)
 *       of the first byte, of one byte every PROBE_STRIDE bytes and of the last byte. Probes
 *       are a sample: a hole between two probed pages still blocks the loop for its read
 *       (readahead fills whole windows, so holes inside a served range are rare).
 *   sendRange(socketFd, fileFd, offset, count, header?) -> sent
 *       Sends `header` (a string of latin1 bytes: the HTTP response head) with MSG_MORE, then
 *       sendfile(2) from fileFd at offset (its file position is neither used nor changed: "If
 *       offset is not NULL, then sendfile() does not modify the file offset of in_fd") until
 *       count bytes went out, the non-blocking socket is full (EAGAIN: "a successful call to
 *       sendfile() may write fewer bytes than requested; the caller should be prepared to
 *       retry"), the file ends (0), or an error. Returns the bytes sent, head and body
 *       together (fewer than both: send the rest another way, after these; a head sent in
 *       part means no body byte was sent), or -errno when an error came before any byte
 *       (EPIPE, ECONNRESET: the client is gone; EINVAL: this file cannot be sent so).
 *
 * Head and body leave in the same segments: MSG_MORE "is used with TCP sockets to obtain the
 * same effect as the TCP_CORK socket option (see tcp(7)), with the difference that this flag
 * can be set on a per-call basis" (send(2)), and sendfile pushes when it is done. sendfile(2)
 * suggests TCP_CORK for "header data in front of the file contents"; measured on loopback, the
 * two setsockopt calls cost more server CPU than the separate header segment they saved, while
 * MSG_MORE costs nothing: one send for the head, where Node would have written it anyway.
 *
 * Arguments are checked: a bad one throws an Error with code ERR_INVALID_ARG.
 */
#include <node_api.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define CACHED 1
#define NOT_CACHED 0
#define UNKNOWN (-1)

#define METHOD_AUTO 0
#define METHOD_PROBE 1

/* Distance between probed bytes inside a range (method 1, and where cachestat is missing). */
#define PROBE_STRIDE (128 * 1024)
/* "sendfile() will transfer at most 0x7ffff000 (2,147,479,552) bytes" per call (sendfile(2)). */
#define SENDFILE_MAX_BYTES 0x7ffff000ULL
/* Response heads up to this size are copied on the stack; longer ones are allocated. */
#define HEAD_STACK_BYTES 2048
/* Offsets and counts come from JS numbers: integers up to 2^53 are exact. */
#define MAX_SAFE_INTEGER 9007199254740991.0

/* cachestat(2) is syscall 451 on every architecture (the unified table, Linux 6.5). */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

/* struct cachestat_range and struct cachestat of <linux/mman.h> (Linux 6.5), spelt out for older headers. */
struct range_of_pages {
  uint64_t off;
  uint64_t len;
};
struct pages_in_cache {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

/* Set once cachestat answered ENOSYS (a kernel before 6.5): probes from then on. */
static int cachestat_missing = 0;

static napi_value invalid(napi_env env, const char* message) {
  napi_throw_error(env, "ERR_INVALID_ARG", message);
  return NULL;
}

/* A descriptor: an integer from 0 to INT32_MAX. */
static int get_fd(napi_env env, napi_value value, int* out) {
  napi_valuetype type;
  double number = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return 0;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (number < 0 || number > 2147483647.0 || number != (double)(int32_t)number) return 0;
  *out = (int)number;
  return 1;
}

/* A non-negative safe integer (an offset or a count). */
static int get_size(napi_env env, napi_value value, uint64_t* out) {
  napi_valuetype type;
  double number = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return 0;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (!(number >= 0 && number <= MAX_SAFE_INTEGER) || number != (double)(uint64_t)number) return 0;
  *out = (uint64_t)number;
  return 1;
}

static napi_value number_value(napi_env env, double number) {
  napi_value out = NULL;
  napi_create_double(env, number, &out);
  return out;
}

/* Reads the file, offset and count arguments at argv[0..2]; 0 after throwing. */
static int get_span(napi_env env, napi_value* argv, int* file, uint64_t* offset, uint64_t* count) {
  const char* problem = NULL;
  if (!get_fd(env, argv[0], file)) problem = "fileFd must be a descriptor (an integer >= 0)";
  else if (!get_size(env, argv[1], offset)) problem = "offset must be an integer >= 0";
  else if (!get_size(env, argv[2], count) || *count == 0) problem = "count must be an integer >= 1";
  if (problem == NULL) return 1;
  invalid(env, problem);
  return 0;
}

/* CACHED when every page of the range is cached, by cachestat(2); UNKNOWN when it cannot say. */
static int cached_by_cachestat(int fd, uint64_t offset, uint64_t count) {
  struct range_of_pages range = {offset, count};
  struct pages_in_cache pages;
  if (syscall(__NR_cachestat, fd, &range, &pages, 0) != 0) {
    if (errno == ENOSYS) cachestat_missing = 1;
    return UNKNOWN;
  }
  long page = sysconf(_SC_PAGESIZE);
  uint64_t size = page > 0 ? (uint64_t)page : 4096;
  uint64_t wanted = (offset + count - 1) / size - offset / size + 1;
  return pages.nr_cache >= wanted ? CACHED : NOT_CACHED;
}

/* Whether the page holding byte `position` is cached: a one-byte RWF_NOWAIT read. */
static int probe_byte(int fd, uint64_t position) {
  char byte;
  struct iovec iov = {&byte, 1};
  ssize_t n;
  do {
    n = preadv2(fd, &iov, 1, (off_t)position, RWF_NOWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == 1) return CACHED;
  /* 0: past the end of the file (it shrank); EAGAIN: the page would come from the disk. */
  if (n == 0 || errno == EAGAIN) return NOT_CACHED;
  /* EOPNOTSUPP: the file system cannot read without waiting; anything else: unknown too. */
  return UNKNOWN;
}

static int cached_by_probes(int fd, uint64_t offset, uint64_t count) {
  uint64_t last = offset + count - 1;
  for (uint64_t position = offset; position < last; position += PROBE_STRIDE) {
    int status = probe_byte(fd, position);
    if (status != CACHED) return status;
  }
  return probe_byte(fd, last);
}

static napi_value range_cached(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int file = -1;
  uint64_t offset = 0, count = 0;
  int32_t method = METHOD_AUTO;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 3) return invalid(env, "rangeCached(fileFd, offset, count, method?)");
  if (!get_span(env, argv, &file, &offset, &count)) return NULL;
  if (argc >= 4 && (napi_get_value_int32(env, argv[3], &method) != napi_ok || (method != METHOD_AUTO && method != METHOD_PROBE))) {
    return invalid(env, "method must be 0 (cachestat, else probes) or 1 (probes)");
  }
  int status = UNKNOWN;
  if (method == METHOD_AUTO && !cachestat_missing) status = cached_by_cachestat(file, offset, count);
  if (status == UNKNOWN) status = cached_by_probes(file, offset, count);
  return number_value(env, status);
}

/* Sends `length` bytes of `data` with MSG_MORE: the bytes sent (fewer when the socket is full), or -errno before any. */
static ssize_t send_head(int sock, const char* data, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = send(sock, data + done, length - done, MSG_MORE | MSG_NOSIGNAL);
    if (n > 0) {
      done += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && done == 0) return -errno;
    break;
  }
  return (ssize_t)done;
}

/* sendfile(2) of up to `count` bytes at `offset` until done, EAGAIN, the end of the file or an error (*error). */
static uint64_t send_body(int sock, int file, uint64_t offset, uint64_t count, int* error) {
  off_t position = (off_t)offset;
  uint64_t sent = 0;
  *error = 0;
  while (sent < count) {
    uint64_t left = count - sent;
    ssize_t n = sendfile(sock, file, &position, (size_t)(left < SENDFILE_MAX_BYTES ? left : SENDFILE_MAX_BYTES));
    if (n > 0) {
      sent += (uint64_t)n;
      continue;
    }
    if (n == 0) break; /* the end of the file: it shrank under us */
    if (errno == EINTR) continue;
    if (errno != EAGAIN) *error = errno; /* EAGAIN: the socket's send buffer is full */
    break;
  }
  return sent;
}

static napi_value send_range(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  int sock = -1, file = -1;
  uint64_t offset = 0, count = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 4) return invalid(env, "sendRange(socketFd, fileFd, offset, count, header?)");
  if (!get_fd(env, argv[0], &sock)) return invalid(env, "socketFd must be a descriptor (an integer >= 0)");
  if (!get_span(env, argv + 1, &file, &offset, &count)) return NULL;
  uint64_t head_sent = 0;
  napi_valuetype type = napi_undefined;
  if (argc >= 5 && napi_typeof(env, argv[4], &type) == napi_ok && type != napi_undefined) {
    size_t length = 0;
    if (type != napi_string || napi_get_value_string_latin1(env, argv[4], NULL, 0, &length) != napi_ok) {
      return invalid(env, "header must be a string (latin1)");
    }
    char stack[HEAD_STACK_BYTES];
    char* head = length < sizeof stack ? stack : malloc(length + 1);
    if (head == NULL) return invalid(env, "header too long to copy");
    napi_get_value_string_latin1(env, argv[4], head, length + 1, &length);
    ssize_t n = send_head(sock, head, length);
    if (head != stack) free(head);
    if (n < 0) return number_value(env, (double)n);
    /* A head sent in part (a full socket): no body now, the caller sends the rest. */
    if ((size_t)n < length) return number_value(env, (double)n);
    head_sent = (uint64_t)n;
  }
  int error = 0;
  uint64_t sent = head_sent + send_body(sock, file, offset, count, &error);
  return number_value(env, sent > 0 || error == 0 ? (double)sent : -(double)error);
}

/* sender_thread.c: large bodies by sendfile off the event loop. */
int define_sender(napi_env env, napi_value exports);

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
      {"rangeCached", NULL, range_cached, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendRange", NULL, send_range, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties) != napi_ok) return NULL;
  if (!define_sender(env, exports)) return NULL;
  return exports;
}
