/*
 * sender_thread — large file bodies sent with sendfile(2) off the event loop, for the boot HTTP
 * server (bootsvc/http/kernel-send.ts; Linux only). A body read through libuv costs a pread on
 * a pool thread and a socket write on the event loop per chunk; here the kernel moves the pages
 * and the event loop only hands a job over and hears when it is done.
 *
 * SENDER_THREADS threads per addon instance (per Node environment), named `rackside-send`, each
 * with its own epoll instance, under SCHED_BATCH (native/thread_priority.h). A socket libuv also watches may sit in a second epoll set: epoll registrations are
 * per (descriptor, open file description) and per epoll instance (epoll(7)), and the JS side
 * keeps libuv from touching the socket meanwhile (paused, nothing queued). Jobs are spread
 * round-robin; a thread sends the head with MSG_MORE, then sendfile() from the file at the job's
 * offset until EAGAIN (the non-blocking socket is full) or TURN_BYTES went (so one fast reader
 * does not hold the thread), then waits for EPOLLOUT|EPOLLONESHOT and goes on. sendfile reads a
 * page that is not cached synchronously: that blocks this thread (not the event loop), and
 * with it the other jobs of this thread for the length of that read — the second thread keeps
 * its own jobs going (the trade-off is documented in docs/PERFORMANCE.md).
 *
 * A job sets TCP_CORK on its socket until the first body bytes are out, so the head leaves in
 * the same segments as the body's start (nginx's `tcp_nopush`), then clears it: corked for the
 * whole body (measured 0.91× → 0.99× nginx for 8 clients on loopback) once stalled a client for
 * 170 s in a 200-client storm — a receive window reopening by less than a segment leaves corked
 * data to TCP's persist timer, which backs off to 2 minutes.
 *
 * Every job works on its own dup(2) of the socket and of the file: whatever JS does meanwhile
 * (the open-file cache closes the file, the server destroys the socket), the thread never
 * writes to a descriptor number that was closed and reused. Both copies are closed on the main
 * thread when the completion is delivered, so senderCancel (main thread) may shutdown(2) the
 * socket copy at any time before that: the pending sendfile or wait then ends with EPIPE.
 *
 *   senderStart(onDone)                                  -> undefined
 *       Starts the threads once; onDone(id, bodyBytesSent, errno) is called on the main thread
 *       for every job (errno 0: every byte went; else the error, ECANCELED when cancelled,
 *       EIO when the file ended before the range did).
 *   senderSend(id, socketFd, fileFd, offset, count, header?) -> 0 or -errno (a dup failed)
 *   senderCancel(id)                                     -> body bytes sent so far, or -1 when no
 *       job has that id (delivered already); the job then completes with ECANCELED (or EPIPE)
 *   senderStats()                                        -> [live jobs, jobs started]
 */
#include <node_api.h>

#include "../thread_priority.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#define SENDER_THREADS 2
/* Bytes one job sends per turn before the thread looks at its other jobs. */
#define TURN_BYTES (4ULL * 1024 * 1024)
#define MAX_EVENTS 64
#define MAX_SAFE_INTEGER 9007199254740991.0

struct sender;

struct job {
  double id;
  int sock; /* our dup of the socket */
  int file; /* our dup of the file */
  off_t position;
  uint64_t left;
  _Atomic uint64_t body_sent; /* written by the thread, read by senderCancel */
  char* head;
  size_t head_length;
  size_t head_sent;
  int error;
  int registered; /* in the thread's epoll set */
  int corked;     /* TCP_CORK set by this job */
  atomic_int cancelled;
  struct sender* owner;
  struct job* next_incoming;
  struct job* prev_live; /* main-thread list of jobs not yet delivered */
  struct job* next_live;
};

struct sender {
  pthread_t thread;
  int epoll;
  int wake; /* eventfd: new jobs or stop */
  pthread_mutex_t lock;
  struct job* incoming;
  atomic_int stopping;
  int running;
  napi_threadsafe_function done;
};

struct instance {
  struct sender senders[SENDER_THREADS];
  napi_threadsafe_function done;
  int started;
  unsigned next_sender;
  struct job* live;
  double live_count;
  double total;
};

static napi_value fail(napi_env env, const char* message) {
  napi_throw_error(env, "ERR_INVALID_ARG", message);
  return NULL;
}

static napi_value number_of(napi_env env, double number) {
  napi_value out = NULL;
  napi_create_double(env, number, &out);
  return out;
}

/* Hands a finished job to the main thread (the thread forgets it). */
static void deliver(struct job* job, int error) {
  if (job->corked) {
    int off = 0;
    setsockopt(job->sock, IPPROTO_TCP, TCP_CORK, &off, sizeof off); /* pushes the last partial segment */
    job->corked = 0;
  }
  if (job->registered) epoll_ctl(job->owner->epoll, EPOLL_CTL_DEL, job->sock, NULL);
  job->registered = 0;
  job->error = error;
  napi_call_threadsafe_function(job->owner->done, job, napi_tsfn_blocking);
}

/* Waits for the socket to take more: EPOLLOUT, once (EPOLLERR and EPOLLHUP always wake it). */
static void arm(struct job* job) {
  struct epoll_event event;
  memset(&event, 0, sizeof event);
  event.events = EPOLLOUT | EPOLLONESHOT;
  event.data.ptr = job;
  int op = job->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(job->owner->epoll, op, job->sock, &event) != 0) {
    deliver(job, errno);
    return;
  }
  job->registered = 1;
}

/* One turn of a job: head, then body until done, EAGAIN, TURN_BYTES or an error. */
static void run(struct job* job) {
  if (atomic_load(&job->cancelled)) {
    deliver(job, ECANCELED);
    return;
  }
  if (!job->corked && job->head_sent == 0 && job->body_sent == 0) {
    int on = 1;
    if (setsockopt(job->sock, IPPROTO_TCP, TCP_CORK, &on, sizeof on) == 0) job->corked = 1;
  }
  while (job->head_sent < job->head_length) {
    ssize_t n = send(job->sock, job->head + job->head_sent, job->head_length - job->head_sent, MSG_MORE | MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      job->head_sent += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      arm(job);
      return;
    }
    deliver(job, n < 0 ? errno : EPIPE);
    return;
  }
  uint64_t turn = 0;
  while (job->left > 0) {
    if (turn >= TURN_BYTES) {
      arm(job); /* level-triggered: fires at once while the socket has room */
      return;
    }
    uint64_t want = job->left < TURN_BYTES - turn ? job->left : TURN_BYTES - turn;
    ssize_t n = sendfile(job->sock, job->file, &job->position, (size_t)want);
    if (n > 0) {
      job->left -= (uint64_t)n;
      atomic_fetch_add(&job->body_sent, (uint64_t)n);
      turn += (uint64_t)n;
      if (job->corked) {
        /* The head left with the first body bytes; streaming corked risks a stall: a window
         * that reopens by less than a segment leaves corked data to the persist timer, which
         * backs off to 2 minutes (seen once as a 181 s initrd in a 200-client storm). */
        int off = 0;
        setsockopt(job->sock, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
        job->corked = 0;
      }
      continue;
    }
    if (n == 0) {
      deliver(job, EIO); /* the file ended before the range: it shrank under us */
      return;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      arm(job);
      return;
    }
    deliver(job, errno);
    return;
  }
  deliver(job, 0);
}

static void* sender_main(void* arg) {
  make_bulk_thread();
  struct sender* sender = arg;
  struct epoll_event events[MAX_EVENTS];
  while (!atomic_load(&sender->stopping)) {
    int n = epoll_wait(sender->epoll, events, MAX_EVENTS, -1);
    if (n < 0) continue; /* EINTR */
    for (int i = 0; i < n; i++) {
      struct job* job = events[i].data.ptr;
      if (job != NULL) {
        run(job);
        continue;
      }
      uint64_t count;
      if (read(sender->wake, &count, sizeof count) < 0) { /* nothing to read: spurious */ }
      pthread_mutex_lock(&sender->lock);
      struct job* list = sender->incoming;
      sender->incoming = NULL;
      pthread_mutex_unlock(&sender->lock);
      /* The list is newest first: run the oldest first. */
      struct job* ordered = NULL;
      while (list != NULL) {
        struct job* next = list->next_incoming;
        list->next_incoming = ordered;
        ordered = list;
        list = next;
      }
      while (ordered != NULL) {
        struct job* next = ordered->next_incoming;
        run(ordered);
        ordered = next;
      }
    }
  }
  return NULL;
}

static void free_job(struct job* job) {
  close(job->sock);
  close(job->file);
  free(job->head);
  free(job);
}

/* Main thread: a finished job, to onDone(id, bodyBytesSent, errno). */
static void call_done(napi_env env, napi_value callback, void* context, void* data) {
  struct instance* instance = context;
  struct job* job = data;
  if (job->prev_live != NULL) job->prev_live->next_live = job->next_live;
  else instance->live = job->next_live;
  if (job->next_live != NULL) job->next_live->prev_live = job->prev_live;
  instance->live_count -= 1;
  double id = job->id, sent = (double)atomic_load(&job->body_sent), error = job->error;
  free_job(job);
  if (instance->live_count == 0 && env != NULL) napi_unref_threadsafe_function(env, instance->done);
  if (env == NULL || callback == NULL) return;
  napi_value argv[3] = {number_of(env, id), number_of(env, sent), number_of(env, error)};
  napi_value global = NULL;
  napi_get_global(env, &global);
  napi_call_function(env, global, callback, 3, argv, NULL);
}

static void stop_senders(void* arg) {
  struct instance* instance = arg;
  if (!instance->started) return;
  for (int i = 0; i < SENDER_THREADS; i++) {
    struct sender* sender = &instance->senders[i];
    if (!sender->running) continue;
    atomic_store(&sender->stopping, 1);
    uint64_t one = 1;
    if (write(sender->wake, &one, sizeof one) < 0) { /* the thread still sees stopping on its next wake */ }
    pthread_join(sender->thread, NULL);
    close(sender->epoll);
    close(sender->wake);
    pthread_mutex_destroy(&sender->lock);
    sender->running = 0;
  }
  instance->started = 0;
}

/* Environment teardown: the threads stop, then the instance goes (never freed before that). */
static void teardown(void* arg) {
  stop_senders(arg);
  free(arg);
}

static struct instance* instance_of(napi_env env) {
  void* data = NULL;
  if (napi_get_instance_data(env, &data) == napi_ok && data != NULL) return data;
  struct instance* instance = calloc(1, sizeof *instance);
  if (instance == NULL) return NULL;
  /* No finalizer: the instance lives until teardown() (registered by senderStart), or leaks its
   * few bytes when no sender ever started. */
  if (napi_set_instance_data(env, instance, NULL, NULL) != napi_ok) {
    free(instance);
    return NULL;
  }
  return instance;
}

static napi_value sender_start(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_valuetype type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 1 || napi_typeof(env, argv[0], &type) != napi_ok || type != napi_function) return fail(env, "senderStart(onDone)");
  struct instance* instance = instance_of(env);
  if (instance == NULL) return fail(env, "no memory for the sender");
  if (instance->started) return NULL;
  napi_value name = NULL;
  napi_create_string_utf8(env, "sendfile sender", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, instance, call_done, &instance->done) != napi_ok) return fail(env, "cannot create the completion function");
  napi_unref_threadsafe_function(env, instance->done);
  for (int i = 0; i < SENDER_THREADS; i++) {
    struct sender* sender = &instance->senders[i];
    sender->done = instance->done;
    sender->epoll = epoll_create1(EPOLL_CLOEXEC);
    sender->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_init(&sender->lock, NULL);
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN;
    event.data.ptr = NULL;
    if (sender->epoll < 0 || sender->wake < 0 || epoll_ctl(sender->epoll, EPOLL_CTL_ADD, sender->wake, &event) != 0 || pthread_create(&sender->thread, NULL, sender_main, sender) != 0) {
      if (sender->epoll >= 0) close(sender->epoll);
      if (sender->wake >= 0) close(sender->wake);
      pthread_mutex_destroy(&sender->lock);
      instance->started = 1;
      stop_senders(instance);
      return fail(env, "cannot start the sender threads");
    }
    pthread_setname_np(sender->thread, "rackside-send"); /* top -H, /proc/PID/task/TID/comm */
    sender->running = 1;
  }
  instance->started = 1;
  napi_add_env_cleanup_hook(env, teardown, instance);
  return NULL;
}

static int get_int(napi_env env, napi_value value, double max, double* out) {
  napi_valuetype type;
  double number = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return 0;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (!(number >= 0 && number <= max) || number != (double)(uint64_t)number) return 0;
  *out = number;
  return 1;
}

static napi_value sender_send(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  double id = 0, sock = 0, file = 0, offset = 0, count = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  struct instance* instance = instance_of(env);
  if (instance == NULL || !instance->started) return fail(env, "senderStart(onDone) first");
  if (argc < 5) return fail(env, "senderSend(id, socketFd, fileFd, offset, count, header?)");
  if (!get_int(env, argv[0], MAX_SAFE_INTEGER, &id)) return fail(env, "id must be an integer >= 0");
  if (!get_int(env, argv[1], 2147483647.0, &sock)) return fail(env, "socketFd must be a descriptor (an integer >= 0)");
  if (!get_int(env, argv[2], 2147483647.0, &file)) return fail(env, "fileFd must be a descriptor (an integer >= 0)");
  if (!get_int(env, argv[3], MAX_SAFE_INTEGER, &offset)) return fail(env, "offset must be an integer >= 0");
  if (!get_int(env, argv[4], MAX_SAFE_INTEGER, &count) || count < 1) return fail(env, "count must be an integer >= 1");
  char* head = NULL;
  size_t head_length = 0;
  napi_valuetype type = napi_undefined;
  if (argc >= 6 && napi_typeof(env, argv[5], &type) == napi_ok && type != napi_undefined) {
    if (type != napi_string || napi_get_value_string_latin1(env, argv[5], NULL, 0, &head_length) != napi_ok) return fail(env, "header must be a string (latin1)");
    head = malloc(head_length + 1);
    if (head == NULL) return fail(env, "header too long to copy");
    napi_get_value_string_latin1(env, argv[5], head, head_length + 1, &head_length);
  }
  struct job* job = calloc(1, sizeof *job);
  if (job == NULL) {
    free(head);
    return fail(env, "no memory for the job");
  }
  job->sock = fcntl((int)sock, F_DUPFD_CLOEXEC, 0);
  job->file = job->sock < 0 ? -1 : fcntl((int)file, F_DUPFD_CLOEXEC, 0);
  if (job->sock < 0 || job->file < 0) {
    int error = errno;
    if (job->sock >= 0) close(job->sock);
    free(head);
    free(job);
    return number_of(env, -(double)error);
  }
  job->id = id;
  job->position = (off_t)offset;
  job->left = (uint64_t)count;
  job->head = head;
  job->head_length = head_length;
  atomic_init(&job->cancelled, 0);
  atomic_init(&job->body_sent, 0);
  struct sender* sender = &instance->senders[instance->next_sender++ % SENDER_THREADS];
  job->owner = sender;
  job->next_live = instance->live;
  if (instance->live != NULL) instance->live->prev_live = job;
  instance->live = job;
  if (instance->live_count == 0) napi_ref_threadsafe_function(env, instance->done);
  instance->live_count += 1;
  instance->total += 1;
  pthread_mutex_lock(&sender->lock);
  job->next_incoming = sender->incoming;
  sender->incoming = job;
  pthread_mutex_unlock(&sender->lock);
  uint64_t one = 1;
  if (write(sender->wake, &one, sizeof one) < 0) { /* EAGAIN: the counter is full, the thread is woken anyway */ }
  return number_of(env, 0);
}

static napi_value sender_cancel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double id = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 1 || !get_int(env, argv[0], MAX_SAFE_INTEGER, &id)) return fail(env, "senderCancel(id)");
  struct instance* instance = instance_of(env);
  for (struct job* job = instance == NULL ? NULL : instance->live; job != NULL; job = job->next_live) {
    if (job->id != id) continue;
    atomic_store(&job->cancelled, 1);
    /* Our copy is open until the completion is delivered (on this thread): a pending sendfile
     * or EPOLLOUT wait ends with EPIPE / EPOLLHUP. */
    shutdown(job->sock, SHUT_RDWR);
    return number_of(env, (double)atomic_load(&job->body_sent));
  }
  return number_of(env, -1);
}

static napi_value sender_stats(napi_env env, napi_callback_info info) {
  (void)info;
  struct instance* instance = instance_of(env);
  napi_value out = NULL;
  napi_create_array_with_length(env, 2, &out);
  napi_set_element(env, out, 0, number_of(env, instance == NULL ? 0 : instance->live_count));
  napi_set_element(env, out, 1, number_of(env, instance == NULL ? 0 : instance->total));
  return out;
}

/* Adds senderStart, senderSend, senderCancel and senderStats to `exports`. */
int define_sender(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"senderStart", NULL, sender_start, NULL, NULL, NULL, napi_enumerable, NULL},
      {"senderSend", NULL, sender_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"senderCancel", NULL, sender_cancel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"senderStats", NULL, sender_stats, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties) == napi_ok;
}
