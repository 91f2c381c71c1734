/*
 * polled_fd — the lifecycle every socket handle of this addon shares: a descriptor watched by a
 * uv_poll on Node's event loop, a JS handle object wrapping it (type-tagged), JS callbacks made
 * with napi_make_callback, and a struct freed only once both the JS wrapper is finalized and
 * libuv has closed the poll handle (in either order).
 *
 * An owner struct (udp_bind.c, udp_connected.c, icmp6_raw.c) embeds `polled_fd` as its FIRST
 * member, so a `polled_fd*` and the owner's pointer are the same address, and names its extra
 * resources in `polled_hooks`.
 */
#ifndef RACKSIDE_POLLED_FD_H
#define RACKSIDE_POLLED_FD_H
#include <node_api.h>
#include <uv.h>

typedef struct polled_fd polled_fd;

typedef struct polled_hooks {
  /* Closes descriptors besides `fd`, on shutdown (may be NULL). */
  void (*close_extra)(polled_fd* p);
  /* Deletes JS references besides on_error, self and the async context (may be NULL). */
  void (*release_extra)(polled_fd* p);
  /* Frees what the owner allocated besides the struct itself (may be NULL). */
  void (*free_extra)(polled_fd* p);
} polled_hooks;

struct polled_fd {
  int fd;
  uv_poll_t poll;
  napi_env env;
  napi_ref on_error;
  /* Strong reference to the handle object while open, so it cannot be collected under the poll. */
  napi_ref self;
  napi_async_context async_context;
  const polled_hooks* hooks;
  int open;
  int poll_started;
  int uv_closed;
  int finalized;
  /* >0 while a JS callback runs: releasing the references is deferred until it returns. */
  int dispatching;
  int release_pending;
};

/*
 * Wraps `p` (already holding fd and hooks) in the JS object `handle` with `tag`, keeps
 * `on_error`, and marks it open. Returns 0, or -1 when napi_wrap or tagging failed (then the
 * caller still owns `p` and its descriptors).
 */
int polled_attach(polled_fd* p, napi_env env, napi_value handle, const napi_type_tag* tag, napi_value on_error, const char* resource);

/*
 * Starts polling `p->fd` for readability with `on_readable` and registers the environment
 * teardown hook. Returns `handle`, or NULL with a JS exception pending (the socket is then shut).
 */
napi_value polled_start(polled_fd* p, napi_value handle, uv_poll_cb on_readable);

/*
 * The struct behind a handle created with `tag`, or NULL with ERR_INVALID_ARG ("not a WHAT")
 * pending; with `must_be_open`, a closed one is NULL with ERR_SOCKET_CLOSED pending.
 */
polled_fd* polled_unwrap(napi_env env, napi_value handle, const napi_type_tag* tag, const char* what, int must_be_open);

/* Stops polling, closes the descriptors and releases the JS references; idempotent. */
void polled_close(polled_fd* p);

/* Calls the function behind `ref` with the handle as `this`; a throw goes to 'uncaughtException'. */
void polled_call_js(polled_fd* p, napi_ref ref, size_t argc, napi_value* argv);

/* Calls on_error(code, "WHAT[ on WHERE]: strerror") for errno `err`; `where` may be NULL. */
void polled_emit_error(polled_fd* p, int err, const char* what, const char* where);

#endif
