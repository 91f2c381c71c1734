/*
 * udp_batch — batched datagram I/O on a connected UDP socket, shared by the event-loop socket
 * (udp_connected.c) and the transfer thread (tftp_pump.c): one round of datagrams out, and up
 * to UDP_RECV_SLOTS datagrams in.
 *
 * Receiving: udp_recv_slots() reads up to UDP_RECV_SLOTS datagrams with one recvmmsg(2) into
 * fixed slots of UDP_RECV_SLOT_BYTES (an ACK is 4 bytes, an ERROR a few hundred; a longer
 * datagram is truncated, which only happens to packets a TFTP server never expects).
 *
 * Sending:
 * A round is at most UDP_SEND_MAX_BATCH datagrams, datagram i gathered from iov[i * per ...]
 * (per = 1 to UDP_SEND_MAX_PARTS pieces). With `segment` > 0 and every datagram but the last
 * exactly `segment` bytes (a run of DATA blocks), the round goes out by UDP segmentation offload:
 * one sendmsg(2) with UDP_SEGMENT (Linux ≥ 4.18), so the stack is walked once per burst; the
 * receiver still gets separate datagrams. Where the route refuses it (EINVAL/EIO/EOPNOTSUPP/
 * ENOPROTOOPT/EMSGSIZE: no checksum offload, a segment over the path MTU) `*gso_usable` is
 * cleared and sendmmsg(2) is used from then on. A caller sizes its rounds with
 * udp_send_round_limit().
 *
 * Header-only (static inline), as udp_args.h.
 */
#ifndef RACKSIDE_UDP_BATCH_H
#define RACKSIDE_UDP_BATCH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Datagrams per recvmmsg: a window's worth of ACKs from a client that ACKs every block. */
#define UDP_RECV_SLOTS 16
#define UDP_RECV_SLOT_BYTES 2048
/* recvmmsg rounds per readiness event before the reader turns to other work. */
#define UDP_RECV_MAX_ROUNDS 4

/*
 * Reads up to UDP_RECV_SLOTS datagrams into `slots` (UDP_RECV_SLOTS × UDP_RECV_SLOT_BYTES),
 * datagram i at slots + i × UDP_RECV_SLOT_BYTES, its length (at most UDP_RECV_SLOT_BYTES) in
 * lengths[i]. Returns how many, or -errno (-EAGAIN when none is waiting; EINTR is retried).
 */
static inline int udp_recv_slots(int fd, unsigned char* slots, uint32_t* lengths) {
  struct mmsghdr messages[UDP_RECV_SLOTS];
  struct iovec iov[UDP_RECV_SLOTS];
  memset(messages, 0, sizeof messages);
  for (int i = 0; i < UDP_RECV_SLOTS; i++) {
    iov[i].iov_base = slots + (size_t)i * UDP_RECV_SLOT_BYTES;
    iov[i].iov_len = UDP_RECV_SLOT_BYTES;
    messages[i].msg_hdr.msg_iov = &iov[i];
    messages[i].msg_hdr.msg_iovlen = 1;
  }
  int n;
  do n = recvmmsg(fd, messages, UDP_RECV_SLOTS, MSG_DONTWAIT, NULL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EWOULDBLOCK ? -EAGAIN : -errno;
  for (int i = 0; i < n; i++) lengths[i] = messages[i].msg_len < UDP_RECV_SLOT_BYTES ? messages[i].msg_len : UDP_RECV_SLOT_BYTES;
  return n;
}

/* Datagrams per round (RFC 7440 windows are split into rounds of this many). */
#define UDP_SEND_MAX_BATCH 64
#define UDP_SEND_MAX_PARTS 4
/* UDP payload bytes per segmentation-offload send: what one IPv4 UDP datagram can carry. */
#define UDP_SEND_GSO_MAX_BYTES 65000
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/* Datagrams per round for datagrams of `segment` bytes (0: not uniform). */
static inline uint32_t udp_send_round_limit(uint32_t segment, int gso_usable) {
  uint32_t limit = UDP_SEND_MAX_BATCH;
  if (segment > 0 && gso_usable && UDP_SEND_GSO_MAX_BYTES / segment < limit) limit = UDP_SEND_GSO_MAX_BYTES / segment;
  return limit == 0 ? 1 : limit;
}

/* Sends iov[0..count*per) as `count` datagrams with one sendmmsg; returns how many went, or -errno. */
static inline int udp_send_mmsg(int fd, struct iovec* iov, uint32_t per, uint32_t count) {
  struct mmsghdr messages[UDP_SEND_MAX_BATCH];
  memset(messages, 0, sizeof(struct mmsghdr) * count);
  for (uint32_t i = 0; i < count; i++) {
    messages[i].msg_hdr.msg_iov = &iov[i * per];
    messages[i].msg_hdr.msg_iovlen = per;
  }
  int n;
  do n = sendmmsg(fd, messages, count, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : n;
}

/* Sends iov[0..count*per) as `count` datagrams of `segment` bytes (the last may be shorter) in one UDP_SEGMENT sendmsg. */
static inline int udp_send_gso(int fd, struct iovec* iov, uint32_t per, uint32_t count, uint16_t segment) {
  char control[CMSG_SPACE(sizeof(uint16_t))];
  memset(control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)count * per, .msg_control = control, .msg_controllen = sizeof control};
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
  memcpy(CMSG_DATA(c), &segment, sizeof segment);
  ssize_t n;
  do n = sendmsg(fd, &msg, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : (int)count;
}

/*
 * Sends one round of `count` (≤ udp_send_round_limit) datagrams; `lengths[i]` is datagram i's
 * byte count. Returns how many went (fewer when the send buffer filled), or -errno for an error
 * other than EAGAIN/EWOULDBLOCK/ENOBUFS (those count as "the rest is lost": a caller's
 * retransmission timer recovers them). `*via_gso` tells which system call was tried.
 */
static inline int udp_send_round(int fd, int* gso_usable, struct iovec* iov, uint32_t per, uint32_t count, uint32_t segment, const size_t* lengths, int* via_gso) {
  int uniform = segment > 0 && segment <= 65535 && count > 1 && *gso_usable && lengths[count - 1] <= segment;
  for (uint32_t i = 0; uniform && i + 1 < count; i++) uniform = lengths[i] == segment;
  int n = uniform ? udp_send_gso(fd, iov, per, count, (uint16_t)segment) : udp_send_mmsg(fd, iov, per, count);
  if (uniform && (n == -EINVAL || n == -EIO || n == -EOPNOTSUPP || n == -ENOPROTOOPT || n == -EMSGSIZE)) {
    *gso_usable = 0; /* this route cannot: sendmmsg from now on */
    uniform = 0;
    n = udp_send_mmsg(fd, iov, per, count);
  }
  if (via_gso != NULL) *via_gso = uniform;
  if (n == -EAGAIN || n == -EWOULDBLOCK || n == -ENOBUFS) return 0;
  return n;
}

#endif
