/*
 * udp_args — argument checks and errors shared by the addon's two socket kinds (udp_bind.c for
 * DHCP, udp_connected.c for TFTP): thrown errors with a `code`, option-object properties,
 * strings, ports, Buffers, functions and IP address literals. Every get_* returns 1 when the
 * value has the wanted type and range (filling `out`), else 0 without throwing, so the caller
 * throws an ERR_INVALID_ARG that names the argument.
 *
 * Header-only (static inline), so each translation unit keeps its own copy and the unused ones
 * cost nothing under -Wall -Wextra -Werror.
 */
#ifndef RACKSIDE_UDP_ARGS_H
#define RACKSIDE_UDP_ARGS_H

#include <node_api.h>
#include <uv.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Throws an Error with `code` (ERR_INVALID_ARG, ERR_SOCKET_CLOSED, ...) and returns NULL. */
static inline napi_value throw_code(napi_env env, const char* code, const char* message) {
  napi_throw_error(env, code, message);
  return NULL;
}

/* Throws an Error whose code is errno's libuv name (ENODEV, EADDRINUSE, ...): "<what>: <strerror>". */
static inline napi_value throw_errno(napi_env env, int err, const char* what) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  return throw_code(env, uv_err_name(-err), message);
}

/* The property `name` of an options object (undefined, never NULL, when it is missing). */
static inline napi_value get_named(napi_env env, napi_value object, const char* name) {
  napi_value value = NULL;
  if (napi_get_named_property(env, object, name, &value) != napi_ok || value == NULL) napi_get_undefined(env, &value);
  return value;
}

/* A JS string that fits `size` bytes with its NUL. */
static inline int get_string(napi_env env, napi_value value, char* out, size_t size) {
  size_t length = 0;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) return 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok || length + 1 > size) return 0;
  return napi_get_value_string_utf8(env, value, out, size, &length) == napi_ok;
}

/* An integer port from `min` (0 to bind any port, 1 for a destination) to 65535. */
static inline int get_port(napi_env env, napi_value value, uint32_t min, uint16_t* out) {
  napi_valuetype type;
  double number = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return 0;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (number < (double)min || number > 65535 || number != (double)(uint32_t)number) return 0;
  *out = (uint16_t)number;
  return 1;
}

/* A Buffer's bytes (not copied: valid while the Buffer is reachable). */
static inline int get_buffer(napi_env env, napi_value value, void** data, size_t* length) {
  bool is_buffer = false;
  if (napi_is_buffer(env, value, &is_buffer) != napi_ok || !is_buffer) return 0;
  return napi_get_buffer_info(env, value, data, length) == napi_ok;
}

/* True when `value` is a function. */
static inline int is_function(napi_env env, napi_value value) {
  napi_valuetype type;
  return napi_typeof(env, value, &type) == napi_ok && type == napi_function;
}

/* A dotted-quad IPv4 literal. */
static inline int get_ipv4(napi_env env, napi_value value, struct in_addr* out) {
  char text[INET_ADDRSTRLEN];
  if (!get_string(env, value, text, sizeof text)) return 0;
  return inet_pton(AF_INET, text, out) == 1;
}

/* An IPv4 or IPv6 literal (no zone) with `port`, as a socket address; returns its length or 0. */
static inline socklen_t get_address(napi_env env, napi_value value, uint16_t port, struct sockaddr_storage* out) {
  char text[INET6_ADDRSTRLEN];
  if (!get_string(env, value, text, sizeof text)) return 0;
  memset(out, 0, sizeof *out);
  struct sockaddr_in* v4 = (struct sockaddr_in*)out;
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return sizeof *v4;
  }
  struct sockaddr_in6* v6 = (struct sockaddr_in6*)out;
  if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return sizeof *v6;
  }
  return 0;
}

#endif
