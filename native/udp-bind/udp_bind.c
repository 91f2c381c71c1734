/*
 * udp_bind — interface-bound UDP sockets for rackside's DHCP server (Linux only).
 *
 * Node's dgram cannot bind a socket to a network interface (SO_BINDTODEVICE), cannot tell on
 * which interface a datagram arrived or to which destination address (IP_PKTINFO), and cannot
 * reach a client that has no IP address yet except by broadcast (it cannot write the ARP
 * cache). A DHCP server on a multi-homed head node needs all three (issue 3, "multi-NIC"):
 *
 *   open({ interface, port, receiveBufferBytes, onMessage, onError }) -> handle
 *       An AF_INET UDP socket with SO_REUSEADDR, SO_BROADCAST, SO_BINDTODEVICE=<interface> and
 *       IP_PKTINFO, bound to 0.0.0.0:<port>, read through a uv_poll on the event loop. Every
 *       datagram is delivered as onMessage(payload, sourceAddress, sourcePort, ifindex,
 *       destinationAddress) — ifindex and destination come from IP_PKTINFO. The handle carries
 *       `ifindex`, `interface`, `port` (the bound port, useful with port 0) and
 *       `receiveBufferBytes`, the buffer the kernel granted (SO_RCVBUF read back, halved as
 *       socket(7) doubles it): SO_RCVBUFFORCE needs CAP_NET_ADMIN, which the systemd unit does
 *       not grant, so plain SO_RCVBUF is capped by net.core.rmem_max (212992 on stock Debian).
 *   kernelDrops(handle) -> count
 *       Datagrams the kernel dropped because the socket's receive queue was full, as of the
 *       last datagram read (SO_RXQ_OVFL, socket(7): the count rides on each received datagram).
 *   send(handle, payload, address, port, sourceAddress?) -> bytes
 *       sendmsg() with an IP_PKTINFO control message naming the interface (ipi_ifindex) and,
 *       when given, the source address (ipi_spec_dst). Broadcast to 255.255.255.255 leaves
 *       through the bound interface only.
 *   sendFrame(handle, payload, mac, sourceAddress, sourcePort, destinationAddress, destinationPort) -> bytes
 *       RFC 2131 §4.1 "unicast to the client's hardware address and 'yiaddr'": builds the IPv4
 *       and UDP headers itself and sends them through an AF_PACKET/SOCK_DGRAM socket to <mac>
 *       on the bound interface (the kernel adds the Ethernet header with the interface's own
 *       MAC as source). The packet socket is opened on first use with protocol 0, so it
 *       receives nothing. Needs CAP_NET_RAW; without it this throws EPERM and the caller falls
 *       back to broadcast, which RFC 2131 §4.1 allows.
 *   close(handle)
 *       Stops polling, closes both sockets; idempotent.
 *
 * The same addon also exports openConnected / sendBatch / closeConnected, connected sockets
 * with batched sends for the TFTP server (udp_connected.c), and openIcmp6 / sendIcmp6 /
 * closeIcmp6, a raw ICMPv6 socket for router advertisements (icmp6_raw.c). Handles of each kind carry a type
 * tag, so one kind passed to the other's functions is refused instead of misread.
 *
 * Errors are thrown as Error objects whose `code` is the libuv/errno name (`ENODEV`, `EACCES`,
 * `EADDRINUSE`, `EPERM`, ...) or `ERR_SOCKET_CLOSED` / `ERR_INVALID_ARG`.
 */
#include <node_api.h>
#include <uv.h>

#include "polled_fd.h"
#include "udp_args.h"
#include "udp_connected.h"
#include "tftp_pump.h"
#include "icmp6_raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RECV_BUFFER_BYTES 65536
/*
 * Datagrams read per readiness event before yielding to the event loop: each is handled to its
 * reply inside its callback (~0.1-0.3 ms), so 16 keeps a DISCOVER storm from holding timers and
 * the HTTP/TFTP servers sharing the loop for more than a few milliseconds.
 */
#define MAX_BATCH 16
#define IPV4_HEADER_BYTES 20
#define UDP_HEADER_BYTES 8
#define MAX_FRAME_PAYLOAD (65535 - IPV4_HEADER_BYTES - UDP_HEADER_BYTES)

typedef struct bound_socket {
  polled_fd base; /* first: see polled_fd.h */
  /* AF_PACKET socket for sendFrame: -1 until first use. */
  int packet_fd;
  unsigned int ifindex;
  char ifname[IF_NAMESIZE];
  uint16_t ip_id;
  napi_ref on_message;
  unsigned char* buffer;
  /* SO_RXQ_OVFL's count on the last datagram read: receive-queue overflows since open. */
  uint32_t kernel_drops;
} bound_socket;

static const napi_type_tag BOUND_TAG = {0x72636b73626f756eULL, 0x7564705f626e6431ULL};

/* ---- small helpers ---------------------------------------------------------------------- */

static int get_mac(napi_env env, napi_value value, unsigned char mac[6]) {
  char text[32];
  unsigned int b[6];
  char extra;
  if (!get_string(env, value, text, sizeof text)) return 0;
  if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &extra) != 6) return 0;
  for (int i = 0; i < 6; i++) mac[i] = (unsigned char)b[i];
  return 1;
}

static bound_socket* unwrap(napi_env env, napi_value handle) {
  return (bound_socket*)polled_unwrap(env, handle, &BOUND_TAG, "udp_bind socket handle", 1);
}

static void close_extra(polled_fd* p) {
  bound_socket* s = (bound_socket*)p;
  if (s->packet_fd >= 0) close(s->packet_fd);
  s->packet_fd = -1;
}

static void release_extra(polled_fd* p) {
  napi_delete_reference(p->env, ((bound_socket*)p)->on_message);
}

static void free_extra(polled_fd* p) {
  free(((bound_socket*)p)->buffer);
}

static const polled_hooks BOUND_HOOKS = {.close_extra = close_extra, .release_extra = release_extra, .free_extra = free_extra};

/* ---- receiving -------------------------------------------------------------------------- */

static void emit_error(bound_socket* s, int err, const char* what) {
  polled_emit_error(&s->base, err, what, s->ifname);
}

static void emit_message(bound_socket* s, size_t length, const struct sockaddr_in* source, unsigned int ifindex,
                         struct in_addr destination) {
  napi_env env = s->base.env;
  napi_value argv[5];
  void* copy = NULL;
  char source_text[INET_ADDRSTRLEN] = "0.0.0.0";
  char destination_text[INET_ADDRSTRLEN] = "0.0.0.0";
  inet_ntop(AF_INET, &source->sin_addr, source_text, sizeof source_text);
  inet_ntop(AF_INET, &destination, destination_text, sizeof destination_text);
  if (napi_create_buffer_copy(env, length, s->buffer, &copy, &argv[0]) != napi_ok) return;
  napi_create_string_utf8(env, source_text, NAPI_AUTO_LENGTH, &argv[1]);
  napi_create_uint32(env, ntohs(source->sin_port), &argv[2]);
  napi_create_uint32(env, ifindex, &argv[3]);
  napi_create_string_utf8(env, destination_text, NAPI_AUTO_LENGTH, &argv[4]);
  polled_call_js(&s->base, s->on_message, 5, argv);
}

static void on_readable(uv_poll_t* handle, int status, int events) {
  (void)events;
  bound_socket* s = handle->data;
  if (!s->base.open) return;
  napi_handle_scope scope;
  napi_open_handle_scope(s->base.env, &scope);
  if (status < 0) {
    emit_error(s, -status, "poll failed");
  } else {
    for (int i = 0; i < MAX_BATCH && s->base.open; i++) {
      struct sockaddr_in source;
      char control[CMSG_SPACE(sizeof(struct in_pktinfo)) + CMSG_SPACE(sizeof(uint32_t))];
      struct iovec iov = {.iov_base = s->buffer, .iov_len = RECV_BUFFER_BYTES};
      struct msghdr msg = {
          .msg_name = &source, .msg_namelen = sizeof source, .msg_iov = &iov, .msg_iovlen = 1,
          .msg_control = control, .msg_controllen = sizeof control,
      };
      memset(&source, 0, sizeof source);
      ssize_t n = recvmsg(s->base.fd, &msg, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) emit_error(s, errno, "recvmsg failed");
        break;
      }
      unsigned int ifindex = 0;
      struct in_addr destination = {.s_addr = htonl(INADDR_ANY)};
      for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
          struct in_pktinfo info;
          memcpy(&info, CMSG_DATA(c), sizeof info);
          ifindex = (unsigned int)info.ipi_ifindex;
          destination = info.ipi_addr;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
          memcpy(&s->kernel_drops, CMSG_DATA(c), sizeof s->kernel_drops);
        }
      }
      napi_handle_scope inner;
      napi_open_handle_scope(s->base.env, &inner);
      emit_message(s, (size_t)n, &source, ifindex, destination);
      napi_close_handle_scope(s->base.env, inner);
    }
  }
  napi_close_handle_scope(s->base.env, scope);
}

/* ---- open / close ----------------------------------------------------------------------- */

static int set_int_option(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value);
}

static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], handle;
  napi_valuetype type;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_typeof(env, argv[0], &type) != napi_ok || type != napi_object) {
    return throw_code(env, "ERR_INVALID_ARG", "open() needs an options object");
  }
  char ifname[IF_NAMESIZE];
  uint16_t port = 0;
  if (!get_string(env, get_named(env, argv[0], "interface"), ifname, sizeof ifname) || ifname[0] == '\0') {
    return throw_code(env, "ERR_INVALID_ARG", "interface must be a network interface name of at most 15 characters");
  }
  if (!get_port(env, get_named(env, argv[0], "port"), 0, &port)) return throw_code(env, "ERR_INVALID_ARG", "port must be an integer 0-65535");
  napi_value on_message = get_named(env, argv[0], "onMessage");
  napi_value on_error = get_named(env, argv[0], "onError");
  if (!is_function(env, on_message) || !is_function(env, on_error)) return throw_code(env, "ERR_INVALID_ARG", "onMessage and onError must be functions");
  int receive_buffer = 0;
  napi_value rb = get_named(env, argv[0], "receiveBufferBytes");
  if (napi_typeof(env, rb, &type) == napi_ok && type == napi_number) napi_get_value_int32(env, rb, &receive_buffer);

  unsigned int ifindex = if_nametoindex(ifname);
  if (ifindex == 0) return throw_errno(env, errno == 0 ? ENODEV : errno, ifname);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, errno, "socket(AF_INET, SOCK_DGRAM)");
  const char* step = NULL;
  if (set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1) < 0) step = "setsockopt(SO_REUSEADDR)";
  else if (set_int_option(fd, SOL_SOCKET, SO_BROADCAST, 1) < 0) step = "setsockopt(SO_BROADCAST)";
  else if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0) step = "setsockopt(SO_BINDTODEVICE)";
  else if (set_int_option(fd, IPPROTO_IP, IP_PKTINFO, 1) < 0) step = "setsockopt(IP_PKTINFO)";
  if (step == NULL && receive_buffer > 0 && set_int_option(fd, SOL_SOCKET, SO_RCVBUFFORCE, receive_buffer) < 0) {
    set_int_option(fd, SOL_SOCKET, SO_RCVBUF, receive_buffer); /* capped by net.core.rmem_max; best effort */
  }
  /* Best effort: without it kernelDrops stays 0. */
  if (step == NULL) (void)set_int_option(fd, SOL_SOCKET, SO_RXQ_OVFL, 1);
  int granted_buffer = 0;
  socklen_t granted_length = sizeof granted_buffer;
  if (step == NULL && getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted_buffer, &granted_length) < 0) granted_buffer = 0;
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (step == NULL && bind(fd, (struct sockaddr*)&address, sizeof address) < 0) step = "bind";
  socklen_t length = sizeof address;
  if (step == NULL && getsockname(fd, (struct sockaddr*)&address, &length) < 0) step = "getsockname";
  if (step != NULL) {
    int err = errno;
    close(fd);
    char what[96];
    snprintf(what, sizeof what, "%s on %s port %u", step, ifname, (unsigned)port);
    return throw_errno(env, err, what);
  }

  bound_socket* s = calloc(1, sizeof *s);
  unsigned char* buffer = malloc(RECV_BUFFER_BYTES);
  if (s == NULL || buffer == NULL) {
    free(s);
    free(buffer);
    close(fd);
    return throw_errno(env, ENOMEM, "udp_bind open");
  }
  s->base.fd = fd;
  s->base.hooks = &BOUND_HOOKS;
  s->packet_fd = -1;
  s->ifindex = ifindex;
  snprintf(s->ifname, sizeof s->ifname, "%s", ifname);
  s->buffer = buffer;

  napi_value ifindex_value, ifname_value, port_value, buffer_value;
  napi_create_object(env, &handle);
  napi_create_uint32(env, ifindex, &ifindex_value);
  napi_create_string_utf8(env, ifname, NAPI_AUTO_LENGTH, &ifname_value);
  napi_create_uint32(env, ntohs(address.sin_port), &port_value);
  napi_create_uint32(env, (uint32_t)(granted_buffer / 2), &buffer_value);
  napi_set_named_property(env, handle, "receiveBufferBytes", buffer_value);
  napi_set_named_property(env, handle, "ifindex", ifindex_value);
  napi_set_named_property(env, handle, "interface", ifname_value);
  napi_set_named_property(env, handle, "port", port_value);
  if (polled_attach(&s->base, env, handle, &BOUND_TAG, on_error, "rackside:udp-bind") != 0) {
    close(fd);
    free(buffer);
    free(s);
    return throw_code(env, "ERR_INTERNAL", "napi_wrap failed");
  }
  napi_create_reference(env, on_message, 1, &s->on_message);
  return polled_start(&s->base, handle, on_readable);
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1) return throw_code(env, "ERR_INVALID_ARG", "not a udp_bind socket handle");
  polled_fd* p = polled_unwrap(env, argv[0], &BOUND_TAG, "udp_bind socket handle", 0);
  if (p == NULL) return NULL;
  polled_close(p);
  return NULL;
}

static napi_value js_kernel_drops(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1) return throw_code(env, "ERR_INVALID_ARG", "kernelDrops(handle)");
  bound_socket* s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  napi_value result;
  napi_create_uint32(env, s->kernel_drops, &result);
  return result;
}

/* ---- sending ---------------------------------------------------------------------------- */

static napi_value js_send(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 4) return throw_code(env, "ERR_INVALID_ARG", "send(handle, payload, address, port, sourceAddress?)");
  bound_socket* s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  void* payload = NULL;
  size_t length = 0;
  struct sockaddr_in destination;
  memset(&destination, 0, sizeof destination);
  destination.sin_family = AF_INET;
  uint16_t port = 0;
  if (!get_buffer(env, argv[1], &payload, &length)) return throw_code(env, "ERR_INVALID_ARG", "payload must be a Buffer");
  if (!get_ipv4(env, argv[2], &destination.sin_addr)) return throw_code(env, "ERR_INVALID_ARG", "address must be a dotted-quad IPv4 address");
  if (!get_port(env, argv[3], 0, &port)) return throw_code(env, "ERR_INVALID_ARG", "port must be an integer 0-65535");
  destination.sin_port = htons(port);
  struct in_pktinfo pktinfo;
  memset(&pktinfo, 0, sizeof pktinfo);
  pktinfo.ipi_ifindex = (int)s->ifindex;
  napi_valuetype type = napi_undefined;
  if (argc >= 5) napi_typeof(env, argv[4], &type);
  if (type != napi_undefined && type != napi_null && !get_ipv4(env, argv[4], &pktinfo.ipi_spec_dst)) {
    return throw_code(env, "ERR_INVALID_ARG", "sourceAddress must be a dotted-quad IPv4 address");
  }
  char control[CMSG_SPACE(sizeof(struct in_pktinfo))];
  memset(control, 0, sizeof control);
  struct iovec iov = {.iov_base = payload, .iov_len = length};
  struct msghdr msg = {
      .msg_name = &destination, .msg_namelen = sizeof destination, .msg_iov = &iov, .msg_iovlen = 1,
      .msg_control = control, .msg_controllen = sizeof control,
  };
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = IPPROTO_IP;
  c->cmsg_type = IP_PKTINFO;
  c->cmsg_len = CMSG_LEN(sizeof pktinfo);
  memcpy(CMSG_DATA(c), &pktinfo, sizeof pktinfo);
  ssize_t n;
  do n = sendmsg(s->base.fd, &msg, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0) return throw_errno(env, errno, "sendmsg");
  napi_value result;
  napi_create_uint32(env, (uint32_t)n, &result);
  return result;
}

/* RFC 1071 Internet checksum over `length` bytes, continuing from `sum`. */
static uint32_t checksum_add(uint32_t sum, const unsigned char* data, size_t length) {
  for (size_t i = 0; i + 1 < length; i += 2) sum += (uint32_t)(data[i] << 8 | data[i + 1]);
  if (length & 1) sum += (uint32_t)(data[length - 1] << 8);
  return sum;
}

static uint16_t checksum_finish(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

static void put16(unsigned char* p, uint16_t v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
}

static napi_value js_send_frame(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 7) {
    return throw_code(env, "ERR_INVALID_ARG", "sendFrame(handle, payload, mac, sourceAddress, sourcePort, destinationAddress, destinationPort)");
  }
  bound_socket* s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  void* payload = NULL;
  size_t length = 0;
  unsigned char mac[6];
  struct in_addr source, destination;
  uint16_t source_port = 0, destination_port = 0;
  if (!get_buffer(env, argv[1], &payload, &length) || length > MAX_FRAME_PAYLOAD) {
    return throw_code(env, "ERR_INVALID_ARG", "payload must be a Buffer of at most 65507 bytes");
  }
  if (!get_mac(env, argv[2], mac)) return throw_code(env, "ERR_INVALID_ARG", "mac must be six colon-separated hex octets");
  if (!get_ipv4(env, argv[3], &source) || !get_ipv4(env, argv[5], &destination)) {
    return throw_code(env, "ERR_INVALID_ARG", "addresses must be dotted-quad IPv4 addresses");
  }
  if (!get_port(env, argv[4], 0, &source_port) || !get_port(env, argv[6], 0, &destination_port)) {
    return throw_code(env, "ERR_INVALID_ARG", "ports must be integers 0-65535");
  }
  if (s->packet_fd < 0) {
    /* Protocol 0: a send-only packet socket; it is never handed received frames. */
    s->packet_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s->packet_fd < 0) return throw_errno(env, errno, "socket(AF_PACKET, SOCK_DGRAM)");
  }
  size_t total = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + length;
  unsigned char* frame = malloc(total);
  if (frame == NULL) return throw_errno(env, ENOMEM, "sendFrame");
  unsigned char* ip = frame;
  unsigned char* udp = frame + IPV4_HEADER_BYTES;
  memset(frame, 0, IPV4_HEADER_BYTES + UDP_HEADER_BYTES);
  ip[0] = 0x45; /* version 4, IHL 5 */
  put16(ip + 2, (uint16_t)total);
  put16(ip + 4, s->ip_id++);
  ip[8] = 64;   /* TTL */
  ip[9] = IPPROTO_UDP;
  memcpy(ip + 12, &source, 4);
  memcpy(ip + 16, &destination, 4);
  put16(ip + 10, checksum_finish(checksum_add(0, ip, IPV4_HEADER_BYTES)));
  put16(udp, source_port);
  put16(udp + 2, destination_port);
  put16(udp + 4, (uint16_t)(UDP_HEADER_BYTES + length));
  memcpy(udp + UDP_HEADER_BYTES, payload, length);
  /* UDP checksum over the pseudo-header (RFC 768); a computed 0 is sent as 0xffff. */
  unsigned char pseudo[12];
  memcpy(pseudo, &source, 4);
  memcpy(pseudo + 4, &destination, 4);
  pseudo[8] = 0;
  pseudo[9] = IPPROTO_UDP;
  put16(pseudo + 10, (uint16_t)(UDP_HEADER_BYTES + length));
  uint16_t udp_sum = checksum_finish(checksum_add(checksum_add(0, pseudo, sizeof pseudo), udp, UDP_HEADER_BYTES + length));
  put16(udp + 6, udp_sum == 0 ? 0xffff : udp_sum);

  struct sockaddr_ll link;
  memset(&link, 0, sizeof link);
  link.sll_family = AF_PACKET;
  link.sll_protocol = htons(ETH_P_IP);
  link.sll_ifindex = (int)s->ifindex;
  link.sll_halen = 6;
  memcpy(link.sll_addr, mac, 6);
  ssize_t n;
  do n = sendto(s->packet_fd, frame, total, MSG_DONTWAIT, (struct sockaddr*)&link, sizeof link);
  while (n < 0 && errno == EINTR);
  int err = errno;
  free(frame);
  if (n < 0) return throw_errno(env, err, "sendto(AF_PACKET)");
  napi_value result;
  napi_create_uint32(env, (uint32_t)n, &result);
  return result;
}

/* ---- module ----------------------------------------------------------------------------- */

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"open", NULL, js_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"send", NULL, js_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendFrame", NULL, js_send_frame, NULL, NULL, NULL, napi_enumerable, NULL},
      {"kernelDrops", NULL, js_kernel_drops, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  udp_connected_register(env, exports);
  tftp_pump_register(env, exports);
  icmp6_raw_register(env, exports);
  return exports;
}

NAPI_MODULE_INIT() {
  return init(env, exports);
}
