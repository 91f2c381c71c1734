/*
 * icmp6_raw — a raw ICMPv6 socket bound to one interface, for the router advertisements of
 * rackside's IPv6 provisioning networks (docs/ipv6.md). Node has no raw sockets.
 *
 *   openIcmp6({ interface, onMessage, onError }) -> handle
 *       socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6) with SO_BINDTODEVICE=<interface>, an
 *       ICMP6_FILTER passing only Router Solicitations (type 133), IPV6_MULTICAST_HOPS and
 *       IPV6_UNICAST_HOPS 255 (RFC 4861 §6.1.2: an RA must arrive with hop limit 255),
 *       IPV6_RECVHOPLIMIT, and membership of ff02::2 (all-routers, where hosts send RS) on the
 *       interface. Each RS is delivered as onMessage(payload, sourceAddress, hopLimit): the
 *       ICMPv6 message from its type byte, the IPv6 source without zone, and the received hop
 *       limit (-1 when the kernel gave none). Needs CAP_NET_RAW (EPERM otherwise). The handle
 *       carries `ifindex` and `interface`.
 *   sendIcmp6(handle, payload, destination, sourceAddress?) -> bytes
 *       sendmsg() of an ICMPv6 message (the kernel fills in the checksum, RFC 3542 §3.1) to
 *       <destination> on the interface, with IPV6_PKTINFO naming the interface and, when
 *       given, the source address (an RA's source is the interface's link-local address,
 *       RFC 4861 §4.2; without it the kernel picks the link-local one for ff02::1).
 *   closeIcmp6(handle)
 *       Stops polling and closes the socket; idempotent.
 *
 * Errors are thrown as Error objects whose `code` is the errno name or ERR_INVALID_ARG /
 * ERR_SOCKET_CLOSED, as in udp_bind.c.
 */
#include <node_api.h>
#include <uv.h>

#include "icmp6_raw.h"
#include "polled_fd.h"
#include "udp_args.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ICMP6_BUFFER_BYTES 2048
#define ICMP6_MAX_BATCH 16

typedef struct icmp6_socket {
  polled_fd base; /* first: see polled_fd.h */
  unsigned int ifindex;
  char ifname[IF_NAMESIZE];
  napi_ref on_message;
  unsigned char buffer[ICMP6_BUFFER_BYTES];
} icmp6_socket;

static const napi_type_tag ICMP6_TAG = {0x72636b7369636d70ULL, 0x367261775f736f63ULL};

static void release_extra(polled_fd* p) {
  napi_delete_reference(p->env, ((icmp6_socket*)p)->on_message);
}

static const polled_hooks ICMP6_HOOKS = {.close_extra = NULL, .release_extra = release_extra, .free_extra = NULL};

static void emit_error(icmp6_socket* s, int err, const char* what) {
  polled_emit_error(&s->base, err, what, s->ifname);
}

/* Reads one datagram; returns 0 when there is nothing more to read. */
static int read_one(icmp6_socket* s) {
  struct sockaddr_in6 source;
  char control[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct in6_pktinfo))];
  struct iovec iov = {.iov_base = s->buffer, .iov_len = sizeof s->buffer};
  struct msghdr msg = {
      .msg_name = &source, .msg_namelen = sizeof source, .msg_iov = &iov, .msg_iovlen = 1,
      .msg_control = control, .msg_controllen = sizeof control,
  };
  memset(&source, 0, sizeof source);
  ssize_t n = recvmsg(s->base.fd, &msg, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EINTR) return 1;
    if (errno != EAGAIN && errno != EWOULDBLOCK) emit_error(s, errno, "recvmsg failed");
    return 0;
  }
  int hop_limit = -1;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) memcpy(&hop_limit, CMSG_DATA(c), sizeof hop_limit);
  }
  char source_text[INET6_ADDRSTRLEN] = "::";
  inet_ntop(AF_INET6, &source.sin6_addr, source_text, sizeof source_text);
  napi_handle_scope scope;
  napi_open_handle_scope(s->base.env, &scope);
  napi_value argv[3];
  void* copy = NULL;
  if (napi_create_buffer_copy(s->base.env, (size_t)n, s->buffer, &copy, &argv[0]) == napi_ok) {
    napi_create_string_utf8(s->base.env, source_text, NAPI_AUTO_LENGTH, &argv[1]);
    napi_create_int32(s->base.env, hop_limit, &argv[2]);
    polled_call_js(&s->base, s->on_message, 3, argv);
  }
  napi_close_handle_scope(s->base.env, scope);
  return 1;
}

static void on_readable(uv_poll_t* handle, int status, int events) {
  (void)events;
  icmp6_socket* s = handle->data;
  if (!s->base.open) return;
  if (status < 0) {
    napi_handle_scope scope;
    napi_open_handle_scope(s->base.env, &scope);
    emit_error(s, -status, "poll failed");
    napi_close_handle_scope(s->base.env, scope);
    return;
  }
  for (int i = 0; i < ICMP6_MAX_BATCH && s->base.open && read_one(s); i++) {
  }
}

static int set_int(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value);
}

/* Socket options of openIcmp6; returns the failing step or NULL. */
static const char* configure(int fd, const char* ifname, unsigned int ifindex) {
  struct icmp6_filter filter;
  ICMP6_FILTER_SETBLOCKALL(&filter);
  ICMP6_FILTER_SETPASS(ND_ROUTER_SOLICIT, &filter);
  struct ipv6_mreq group;
  memset(&group, 0, sizeof group);
  inet_pton(AF_INET6, "ff02::2", &group.ipv6mr_multiaddr);
  group.ipv6mr_interface = ifindex;
  if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0) return "setsockopt(SO_BINDTODEVICE)";
  if (setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) < 0) return "setsockopt(ICMP6_FILTER)";
  if (set_int(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, 255) < 0) return "setsockopt(IPV6_MULTICAST_HOPS)";
  if (set_int(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 255) < 0) return "setsockopt(IPV6_UNICAST_HOPS)";
  if (set_int(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, 0) < 0) return "setsockopt(IPV6_MULTICAST_LOOP)";
  if (set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) < 0) return "setsockopt(IPV6_RECVHOPLIMIT)";
  if (set_int(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, (int)ifindex) < 0) return "setsockopt(IPV6_MULTICAST_IF)";
  if (setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &group, sizeof group) < 0) return "join ff02::2";
  return NULL;
}

static napi_value wrap_handle(napi_env env, icmp6_socket* s, napi_value on_message, napi_value on_error) {
  napi_value handle, ifindex_value, ifname_value;
  napi_create_object(env, &handle);
  napi_create_uint32(env, s->ifindex, &ifindex_value);
  napi_create_string_utf8(env, s->ifname, NAPI_AUTO_LENGTH, &ifname_value);
  napi_set_named_property(env, handle, "ifindex", ifindex_value);
  napi_set_named_property(env, handle, "interface", ifname_value);
  if (polled_attach(&s->base, env, handle, &ICMP6_TAG, on_error, "rackside:icmp6-raw") != 0) return NULL;
  napi_create_reference(env, on_message, 1, &s->on_message);
  return handle;
}

static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_valuetype type;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_typeof(env, argv[0], &type) != napi_ok || type != napi_object) return throw_code(env, "ERR_INVALID_ARG", "openIcmp6() needs an options object");
  char ifname[IF_NAMESIZE];
  if (!get_string(env, get_named(env, argv[0], "interface"), ifname, sizeof ifname) || ifname[0] == '\0') {
    return throw_code(env, "ERR_INVALID_ARG", "interface must be a network interface name of at most 15 characters");
  }
  napi_value on_message = get_named(env, argv[0], "onMessage");
  napi_value on_error = get_named(env, argv[0], "onError");
  if (!is_function(env, on_message) || !is_function(env, on_error)) return throw_code(env, "ERR_INVALID_ARG", "onMessage and onError must be functions");
  unsigned int ifindex = if_nametoindex(ifname);
  if (ifindex == 0) return throw_errno(env, errno == 0 ? ENODEV : errno, ifname);
  int fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMPV6);
  if (fd < 0) return throw_errno(env, errno, "socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6)");
  const char* step = configure(fd, ifname, ifindex);
  if (step != NULL) {
    int err = errno;
    close(fd);
    char what[96];
    snprintf(what, sizeof what, "%s on %s", step, ifname);
    return throw_errno(env, err, what);
  }
  icmp6_socket* s = calloc(1, sizeof *s);
  if (s == NULL) {
    close(fd);
    return throw_errno(env, ENOMEM, "openIcmp6");
  }
  s->base.fd = fd;
  s->base.hooks = &ICMP6_HOOKS;
  s->ifindex = ifindex;
  snprintf(s->ifname, sizeof s->ifname, "%s", ifname);
  napi_value handle = wrap_handle(env, s, on_message, on_error);
  if (handle == NULL) {
    close(fd);
    free(s);
    return throw_code(env, "ERR_INTERNAL", "napi_wrap failed");
  }
  return polled_start(&s->base, handle, on_readable);
}

static icmp6_socket* unwrap_any(napi_env env, napi_value handle) {
  return (icmp6_socket*)polled_unwrap(env, handle, &ICMP6_TAG, "icmp6 socket handle", 0);
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1) return throw_code(env, "ERR_INVALID_ARG", "closeIcmp6(handle)");
  icmp6_socket* s = unwrap_any(env, argv[0]);
  if (s == NULL) return NULL;
  polled_close(&s->base);
  return NULL;
}

static int get_ipv6(napi_env env, napi_value value, struct in6_addr* out) {
  char text[INET6_ADDRSTRLEN];
  return get_string(env, value, text, sizeof text) && inet_pton(AF_INET6, text, out) == 1;
}

static napi_value js_send(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_valuetype type;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3) return throw_code(env, "ERR_INVALID_ARG", "sendIcmp6(handle, payload, destination, sourceAddress?)");
  icmp6_socket* s = unwrap_any(env, argv[0]);
  if (s == NULL) return NULL;
  if (!s->base.open) return throw_code(env, "ERR_SOCKET_CLOSED", "socket is closed");
  void* data = NULL;
  size_t length = 0;
  if (!get_buffer(env, argv[1], &data, &length) || length < 4) return throw_code(env, "ERR_INVALID_ARG", "payload must be a Buffer of at least 4 bytes");
  struct sockaddr_in6 destination;
  memset(&destination, 0, sizeof destination);
  destination.sin6_family = AF_INET6;
  destination.sin6_scope_id = s->ifindex;
  if (!get_ipv6(env, argv[2], &destination.sin6_addr)) return throw_code(env, "ERR_INVALID_ARG", "destination must be an IPv6 address literal without zone");
  struct in6_pktinfo pktinfo;
  memset(&pktinfo, 0, sizeof pktinfo);
  pktinfo.ipi6_ifindex = s->ifindex;
  if (argc >= 4 && napi_typeof(env, argv[3], &type) == napi_ok && type != napi_undefined && !get_ipv6(env, argv[3], &pktinfo.ipi6_addr)) {
    return throw_code(env, "ERR_INVALID_ARG", "sourceAddress must be an IPv6 address literal without zone");
  }
  char control[CMSG_SPACE(sizeof pktinfo)];
  memset(control, 0, sizeof control);
  struct iovec iov = {.iov_base = data, .iov_len = length};
  struct msghdr msg = {
      .msg_name = &destination, .msg_namelen = sizeof destination, .msg_iov = &iov, .msg_iovlen = 1,
      .msg_control = control, .msg_controllen = sizeof control,
  };
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = IPPROTO_IPV6;
  c->cmsg_type = IPV6_PKTINFO;
  c->cmsg_len = CMSG_LEN(sizeof pktinfo);
  memcpy(CMSG_DATA(c), &pktinfo, sizeof pktinfo);
  ssize_t n;
  do n = sendmsg(s->base.fd, &msg, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0) return throw_errno(env, errno, "sendmsg(ICMPv6)");
  napi_value result;
  napi_create_uint32(env, (uint32_t)n, &result);
  return result;
}

void icmp6_raw_register(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"openIcmp6", NULL, js_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendIcmp6", NULL, js_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"closeIcmp6", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
}
