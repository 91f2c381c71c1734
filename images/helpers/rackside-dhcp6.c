/*
 * rackside-dhcp6: a one-shot DHCPv6 client (RFC 8415) for the rackside ramdisk, which Debian's
 * busybox-static lacks (no udhcpc6). It gets one address (IA_NA) on IFACE and prints the lease as
 * KEY=VALUE lines for images/ramdisk/lib-net6.sh, then exits; it configures nothing itself:
 *   ADDRESS=fd00:1::100   the leased address
 *   PREFIXLEN=64          DHCPv6 carries no prefix length (§21.6): 64, as ISC dhclient assumes;
 *                         the on-link prefix of a router advertisement wins over it in the kernel
 *   VALID=3600            valid lifetime in seconds (§21.6)
 *   DNS=fd00:1::53 …      option 23, DNS Recursive Name Server (RFC 3646), space-separated
 *   BOOT_URL=http://…     option 59, Boot File URL (RFC 5970), only when every byte is a
 *                         printable non-space, non-quote character
 *   SERVER=fe80::1        the link-local address the Reply came from
 * Exchange: Solicit with Rapid Commit (§18.2.1) to ff02::1:2 from [link-local]:546; a Reply
 * (Rapid Commit) ends it, an Advertise is answered with a Request naming its server (§18.2.2).
 * The client identifier is a DUID-LL of the NIC's MAC (§11.4), the IAID the MAC's last 4 bytes.
 * Messages are retransmitted every second (a shortened §15 schedule: the ramdisk has nothing
 * else to do) until SECONDS have passed. Exit 0 with a lease, 1 without, 2 on a usage or socket
 * error. The link-local address must have passed duplicate address detection (the script waits
 * for it); until then sends fail and are retried.
 * Usage: rackside-dhcp6 IFACE [SECONDS]. Built static by the ramdisk builder (images/helpers.ts).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { SOLICIT = 1, ADVERTISE = 2, REQUEST = 3, REPLY = 7 };
enum { OPT_CLIENTID = 1, OPT_SERVERID = 2, OPT_IA_NA = 3, OPT_IAADDR = 5, OPT_ORO = 6, OPT_ELAPSED = 8,
       OPT_STATUS = 13, OPT_RAPID_COMMIT = 14, OPT_DNS = 23, OPT_BOOT_URL = 59 };

struct lease {
  unsigned char server_id[130];
  int server_id_len;
  struct in6_addr address;
  unsigned valid;
  int has_address;
  char dns[512];
  char boot_url[512];
};

static unsigned get16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned get32(const unsigned char *p) { return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3]; }
static unsigned char *put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)(v >> 8); p[1] = (unsigned char)v; return p + 2; }
static unsigned char *put32(unsigned char *p, unsigned v) { p = put16(p, v >> 16); return put16(p, v & 0xffff); }
static unsigned char *put_opt(unsigned char *p, unsigned code, const void *data, unsigned len) {
  p = put16(put16(p, code), len);
  if (len > 0) memcpy(p, data, len);
  return p + len;
}

/* Builds a Solicit or a Request (with the Advertise's server identifier and address); returns its length. */
static int build(unsigned char *out, int type, const unsigned char xid[3], const unsigned char mac[6],
                 unsigned elapsed_cs, const struct lease *adv) {
  unsigned char *p = out, duid[10] = {0, 3, 0, 1}, ia[40], oro[4];
  *p++ = (unsigned char)type;
  memcpy(p, xid, 3);
  p += 3;
  memcpy(duid + 4, mac, 6);
  p = put_opt(p, OPT_CLIENTID, duid, sizeof duid);
  if (type == REQUEST) p = put_opt(p, OPT_SERVERID, adv->server_id, (unsigned)adv->server_id_len);
  unsigned char *q = put32(put32(put32(ia, get32(mac + 2)), 0), 0); /* IAID, T1 = T2 = 0: the server's choice */
  if (type == REQUEST && adv->has_address) {
    q = put16(put16(q, OPT_IAADDR), 24);
    memcpy(q, &adv->address, 16);
    q = put32(put32(q + 16, 0), 0);
  }
  p = put_opt(p, OPT_IA_NA, ia, (unsigned)(q - ia));
  unsigned char el[2];
  put16(el, elapsed_cs > 0xffff ? 0xffff : elapsed_cs);
  p = put_opt(p, OPT_ELAPSED, el, 2);
  put16(put16(oro, OPT_DNS), OPT_BOOT_URL);
  p = put_opt(p, OPT_ORO, oro, 4);
  if (type == SOLICIT) p = put_opt(p, OPT_RAPID_COMMIT, NULL, 0);
  return (int)(p - out);
}

/* A Status Code option other than Success (0) makes the message unusable. */
static int status_failed(const unsigned char *v, unsigned len) { return len >= 2 && get16(v) != 0; }

/* Reads the IA_NA's first address (§21.4: IAID, T1, T2, then options). Returns -1 on a failing status. */
static int parse_ia(const unsigned char *v, unsigned len, struct lease *l) {
  for (unsigned at = 12; at + 4 <= len;) {
    unsigned code = get16(v + at), olen = get16(v + at + 2);
    if (at + 4 + olen > len) break;
    const unsigned char *o = v + at + 4;
    if (code == OPT_STATUS && status_failed(o, olen)) return -1;
    if (code == OPT_IAADDR && olen >= 24 && !l->has_address) {
      memcpy(&l->address, o, 16);
      l->valid = get32(o + 20);
      l->has_address = 1;
    }
    at += 4 + olen;
  }
  return 0;
}

static int printable_url(const unsigned char *v, unsigned len) {
  for (unsigned i = 0; i < len; i++) if (v[i] <= ' ' || v[i] >= 127 || v[i] == '\'' || v[i] == '"' || v[i] == '\\') return 0;
  return len > 0 && len < 512;
}

/* Parses the options of a message into `l`; returns -1 when it must be ignored. */
static int parse(const unsigned char *m, int n, struct lease *l, int *rapid) {
  memset(l, 0, sizeof *l);
  *rapid = 0;
  for (int at = 4; at + 4 <= n;) {
    unsigned code = get16(m + at), len = get16(m + at + 2);
    if (at + 4 + (int)len > n) return -1;
    const unsigned char *v = m + at + 4;
    if (code == OPT_SERVERID && len <= sizeof l->server_id) { memcpy(l->server_id, v, len); l->server_id_len = (int)len; }
    if (code == OPT_STATUS && status_failed(v, len)) return -1;
    if (code == OPT_IA_NA && len >= 12 && parse_ia(v, len, l) < 0) return -1;
    if (code == OPT_RAPID_COMMIT) *rapid = 1;
    if (code == OPT_DNS) {
      for (unsigned i = 0; i + 16 <= len; i += 16) {
        char text[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, v + i, text, sizeof text);
        size_t used = strlen(l->dns);
        if (used + strlen(text) + 2 < sizeof l->dns) snprintf(l->dns + used, sizeof l->dns - used, "%s%s", used ? " " : "", text);
      }
    }
    if (code == OPT_BOOT_URL && printable_url(v, len)) { memcpy(l->boot_url, v, len); l->boot_url[len] = '\0'; }
    at += 4 + (int)len;
  }
  return l->server_id_len > 0 && l->has_address ? 0 : -1;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int open_socket(const char *iface, unsigned ifindex) {
  int s = socket(AF_INET6, SOCK_DGRAM, 0), one = 1;
  if (s < 0) return -1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, iface, (socklen_t)strlen(iface) + 1) < 0) { close(s); return -1; }
  setsockopt(s, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof ifindex);
  struct sockaddr_in6 me = { .sin6_family = AF_INET6, .sin6_port = htons(546), .sin6_addr = IN6ADDR_ANY_INIT };
  if (bind(s, (struct sockaddr *)&me, sizeof me) < 0) { close(s); return -1; }
  return s;
}

static void print_lease(const struct lease *l, const struct sockaddr_in6 *from) {
  char addr[INET6_ADDRSTRLEN], server[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, &l->address, addr, sizeof addr);
  inet_ntop(AF_INET6, &from->sin6_addr, server, sizeof server);
  printf("ADDRESS=%s\nPREFIXLEN=64\nVALID=%u\nSERVER=%s\n", addr, l->valid, server);
  if (l->dns[0]) printf("DNS=%s\n", l->dns);
  if (l->boot_url[0]) printf("BOOT_URL=%s\n", l->boot_url);
}

static int get_mac(const char *iface, unsigned char mac[6]) {
  struct ifreq ifr;
  int s = socket(AF_INET6, SOCK_DGRAM, 0);
  if (s < 0) return -1;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface);
  int rc = ioctl(s, SIOCGIFHWADDR, &ifr);
  close(s);
  if (rc < 0) return -1;
  memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
  return 0;
}

int main(int argc, char **argv) {
  /* --version: the ramdisk's selftest runs every host tool this way (images/ramdisk/init). */
  if (argc == 2 && strcmp(argv[1], "--version") == 0) { puts("rackside-dhcp6 1"); return 0; }
  if (argc < 2 || argc > 3) { fprintf(stderr, "usage: rackside-dhcp6 IFACE [SECONDS]\n"); return 2; }
  const char *iface = argv[1];
  long seconds = argc == 3 ? strtol(argv[2], NULL, 10) : 30;
  unsigned ifindex = if_nametoindex(iface);
  unsigned char mac[6], xid[3], out[512], in[2048];
  if (ifindex == 0 || get_mac(iface, mac) < 0) { fprintf(stderr, "rackside-dhcp6: no interface %s\n", iface); return 2; }
  int s = open_socket(iface, ifindex);
  if (s < 0) { fprintf(stderr, "rackside-dhcp6: cannot open [::]:546 on %s: %s\n", iface, strerror(errno)); return 2; }
  srand((unsigned)now_ms() ^ (unsigned)getpid() ^ get32(mac + 2));
  for (int i = 0; i < 3; i++) xid[i] = (unsigned char)(rand() >> 8);
  struct sockaddr_in6 servers = { .sin6_family = AF_INET6, .sin6_port = htons(547), .sin6_scope_id = ifindex };
  inet_pton(AF_INET6, "ff02::1:2", &servers.sin6_addr);
  struct lease adv, got;
  int type = SOLICIT;
  long start = now_ms(), deadline = start + seconds * 1000L, next_send = start;
  while (now_ms() < deadline) {
    if (now_ms() >= next_send) {
      int len = build(out, type, xid, mac, (unsigned)((now_ms() - start) / 10), &adv);
      sendto(s, out, (size_t)len, 0, (struct sockaddr *)&servers, sizeof servers); /* fails while the link-local address is tentative */
      next_send = now_ms() + 1000;
    }
    struct pollfd pfd = { .fd = s, .events = POLLIN };
    long wait = next_send - now_ms();
    if (poll(&pfd, 1, (int)(wait < 0 ? 0 : wait)) <= 0) continue;
    struct sockaddr_in6 from;
    socklen_t fromlen = sizeof from;
    int n = (int)recvfrom(s, in, sizeof in, 0, (struct sockaddr *)&from, &fromlen);
    if (n < 4 || memcmp(in + 1, xid, 3) != 0) continue;
    int rapid;
    if (in[0] == ADVERTISE && type == SOLICIT && parse(in, n, &adv, &rapid) == 0) {
      type = REQUEST; /* §18.2.2: the first usable Advertise (rackside's carries preference 255) */
      for (int i = 0; i < 3; i++) xid[i] = (unsigned char)(rand() >> 8);
      next_send = now_ms();
    } else if (in[0] == REPLY && parse(in, n, &got, &rapid) == 0 && (type == REQUEST || rapid)) {
      print_lease(&got, &from);
      close(s);
      return 0;
    }
  }
  close(s);
  fprintf(stderr, "rackside-dhcp6: no DHCPv6 lease on %s in %ld s\n", iface, seconds);
  return 1;
}
