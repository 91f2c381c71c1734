/* polled_fd — see polled_fd.h. */
#include "polled_fd.h"
#include "udp_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void maybe_free(polled_fd* p) {
  if (!p->finalized) return;
  if (p->poll_started && !p->uv_closed) return;
  if (p->hooks != NULL && p->hooks->free_extra != NULL) p->hooks->free_extra(p);
  free(p);
}

static void on_poll_closed(uv_handle_t* handle) {
  polled_fd* p = handle->data;
  p->uv_closed = 1;
  maybe_free(p);
}

static void finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  polled_fd* p = data;
  p->finalized = 1;
  maybe_free(p);
}

static void release_js(polled_fd* p) {
  p->release_pending = 0;
  if (p->hooks != NULL && p->hooks->release_extra != NULL) p->hooks->release_extra(p);
  napi_delete_reference(p->env, p->on_error);
  napi_async_destroy(p->env, p->async_context);
  napi_delete_reference(p->env, p->self);
}

/* Releases the OS resources; `call_js` is 0 during environment teardown (no JS may run). */
static void shutdown_fd(polled_fd* p, int call_js) {
  if (!p->open) return;
  p->open = 0;
  if (p->poll_started) {
    uv_poll_stop(&p->poll);
    uv_close((uv_handle_t*)&p->poll, on_poll_closed);
  }
  close(p->fd);
  p->fd = -1;
  if (p->hooks != NULL && p->hooks->close_extra != NULL) p->hooks->close_extra(p);
  if (call_js) {
    if (p->dispatching > 0) p->release_pending = 1;
    else release_js(p);
  }
}

static void cleanup_hook(void* arg) {
  shutdown_fd(arg, 0);
}

int polled_attach(polled_fd* p, napi_env env, napi_value handle, const napi_type_tag* tag, napi_value on_error, const char* resource) {
  napi_value resource_name;
  p->env = env;
  p->poll.data = p;
  if (napi_wrap(env, handle, p, finalize, NULL, NULL) != napi_ok || napi_type_tag_object(env, handle, tag) != napi_ok) return -1;
  napi_create_string_utf8(env, resource, NAPI_AUTO_LENGTH, &resource_name);
  napi_create_reference(env, on_error, 1, &p->on_error);
  napi_create_reference(env, handle, 1, &p->self);
  napi_async_init(env, handle, resource_name, &p->async_context);
  p->open = 1;
  return 0;
}

napi_value polled_start(polled_fd* p, napi_value handle, uv_poll_cb on_readable) {
  uv_loop_t* loop = NULL;
  int rc = napi_get_uv_event_loop(p->env, &loop) == napi_ok ? uv_poll_init(loop, &p->poll, p->fd) : UV_EINVAL;
  if (rc == 0) {
    p->poll_started = 1;
    rc = uv_poll_start(&p->poll, UV_READABLE, on_readable);
  }
  if (rc != 0) {
    shutdown_fd(p, 1);
    return throw_errno(p->env, -rc, "uv_poll_start");
  }
  napi_add_env_cleanup_hook(p->env, cleanup_hook, p);
  return handle;
}

polled_fd* polled_unwrap(napi_env env, napi_value handle, const napi_type_tag* tag, const char* what, int must_be_open) {
  void* data = NULL;
  bool tagged = false;
  if (napi_check_object_type_tag(env, handle, tag, &tagged) != napi_ok || !tagged || napi_unwrap(env, handle, &data) != napi_ok || data == NULL) {
    char message[96];
    snprintf(message, sizeof message, "not a %s", what);
    throw_code(env, "ERR_INVALID_ARG", message);
    return NULL;
  }
  polled_fd* p = data;
  if (must_be_open && !p->open) {
    throw_code(env, "ERR_SOCKET_CLOSED", "socket is closed");
    return NULL;
  }
  return p;
}

void polled_close(polled_fd* p) {
  if (!p->open) return;
  napi_remove_env_cleanup_hook(p->env, cleanup_hook, p);
  shutdown_fd(p, 1);
}

void polled_call_js(polled_fd* p, napi_ref ref, size_t argc, napi_value* argv) {
  napi_env env = p->env;
  napi_value fn, recv, result;
  if (napi_get_reference_value(env, ref, &fn) != napi_ok || fn == NULL) return;
  /* napi_make_callback wants an object receiver; the handle is `this` for the callback. */
  if (napi_get_reference_value(env, p->self, &recv) != napi_ok || recv == NULL) napi_get_global(env, &recv);
  p->dispatching++;
  napi_status status = napi_make_callback(env, p->async_context, recv, fn, argc, argv, &result);
  p->dispatching--;
  if (status == napi_pending_exception) {
    /* Same as an exception thrown by an EventEmitter listener: process 'uncaughtException'. */
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  if (p->dispatching == 0 && p->release_pending) release_js(p);
}

void polled_emit_error(polled_fd* p, int err, const char* what, const char* where) {
  napi_value argv[2];
  char message[256];
  if (where != NULL) snprintf(message, sizeof message, "%s on %s: %s", what, where, strerror(err));
  else snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_create_string_utf8(p->env, uv_err_name(-err), NAPI_AUTO_LENGTH, &argv[0]);
  napi_create_string_utf8(p->env, message, NAPI_AUTO_LENGTH, &argv[1]);
  polled_call_js(p, p->on_error, 2, argv);
}
