/*
 * rackside-lldp: listens for LLDP (IEEE 802.1AB-2016) on the given interfaces for at most
 * SECONDS and prints one JSON object per interface that heard a neighbour, for the rackside
 * ramdisk's discovery report (images/ramdisk/lib-discovery.sh, agent/discovery/report.ts):
 *   {"interface":"eth0","chassis_id":"…","port_id":"…","port_description":"…",
 *    "system_name":"…","management_address":"…","vlans":[100,200]}
 * TLVs read (§8.5): 1 Chassis ID, 2 Port ID, 4 Port Description, 5 System Name, 8 Management
 * Address, and the IEEE 802.1 organizationally specific TLVs (OUI 00-80-C2, Annex D) 1 Port
 * VLAN ID and 3 VLAN Name. The first LLDPDU per interface counts; it returns as soon as every
 * interface has one. busybox has no raw sockets, hence this helper: AF_PACKET, ethertype 0x88cc,
 * and membership of the nearest-bridge group address 01-80-C2-00-00-0E (§7.1); an interface
 * that is down is brought up first.
 * Usage: rackside-lldp SECONDS IFACE... Built static by the ramdisk builder (images/helpers.ts).
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef ETH_P_LLDP
#define ETH_P_LLDP 0x88cc
#endif
#define MAX_IFACES 32
#define MAX_VLANS 64

struct neighbour {
  char chassis[256], port[256], port_desc[256], sys_name[256], mgmt[64];
  int vlans[MAX_VLANS], nvlans;
};

static void hex_mac(char *out, size_t size, const unsigned char *v, int len) {
  size_t at = 0;
  out[0] = '\0';
  for (int i = 0; i < len && at + 4 < size; i++) at += (size_t)snprintf(out + at, size - at, i == 0 ? "%02x" : ":%02x", v[i]);
}

/* Text of an ID TLV: MAC subtypes as aa:bb:…, network addresses as IPv4/IPv6, the rest as bytes. */
static void id_text(char *out, size_t size, int subtype, int mac_subtype, const unsigned char *v, int len) {
  if (subtype == mac_subtype && len == 6) { hex_mac(out, size, v, len); return; }
  if (subtype == (mac_subtype == 4 ? 5 : 4) && len >= 1) { /* network address: IANA family + address */
    if (v[0] == 1 && len == 5) { inet_ntop(AF_INET, v + 1, out, (socklen_t)size); return; }
    if (v[0] == 2 && len == 17) { inet_ntop(AF_INET6, v + 1, out, (socklen_t)size); return; }
  }
  int n = len < (int)size - 1 ? len : (int)size - 1;
  memcpy(out, v, (size_t)n);
  out[n] = '\0';
}

static void copy_text(char *out, size_t size, const unsigned char *v, int len) {
  int n = len < (int)size - 1 ? len : (int)size - 1;
  memcpy(out, v, (size_t)n);
  out[n] = '\0';
}

static void add_vlan(struct neighbour *nb, int id) {
  if (id < 1 || id > 4094 || nb->nvlans >= MAX_VLANS) return;
  for (int i = 0; i < nb->nvlans; i++) if (nb->vlans[i] == id) return;
  nb->vlans[nb->nvlans++] = id;
}

/* Parses an LLDPDU (the Ethernet payload); 0 when it has a chassis and port ID (§8.2). */
static int parse_lldpdu(const unsigned char *p, int len, struct neighbour *nb) {
  memset(nb, 0, sizeof *nb);
  while (len >= 2) {
    int type = p[0] >> 1, tlen = ((p[0] & 1) << 8) | p[1];
    const unsigned char *v = p + 2;
    if (tlen > len - 2 || type == 0) break; /* End Of LLDPDU, or truncated */
    if (type == 1 && tlen >= 2) id_text(nb->chassis, sizeof nb->chassis, v[0], 4, v + 1, tlen - 1);
    else if (type == 2 && tlen >= 2) id_text(nb->port, sizeof nb->port, v[0], 3, v + 1, tlen - 1);
    else if (type == 4) copy_text(nb->port_desc, sizeof nb->port_desc, v, tlen);
    else if (type == 5) copy_text(nb->sys_name, sizeof nb->sys_name, v, tlen);
    else if (type == 8 && tlen >= 2 && nb->mgmt[0] == '\0') { /* length, IANA family, address */
      int alen = v[0] - 1;
      if (v[1] == 1 && alen == 4 && tlen >= 6) inet_ntop(AF_INET, v + 2, nb->mgmt, sizeof nb->mgmt);
      else if (v[1] == 2 && alen == 16 && tlen >= 18) inet_ntop(AF_INET6, v + 2, nb->mgmt, sizeof nb->mgmt);
    } else if (type == 127 && tlen >= 6 && v[0] == 0x00 && v[1] == 0x80 && v[2] == 0xc2) {
      if (v[3] == 1) add_vlan(nb, (v[4] << 8) | v[5]); /* Port VLAN ID (Annex D.2.1) */
      else if (v[3] == 3) add_vlan(nb, (v[4] << 8) | v[5]); /* VLAN Name (D.2.3): VLAN ID first */
    }
    p += 2 + tlen;
    len -= 2 + tlen;
  }
  return nb->chassis[0] != '\0' && nb->port[0] != '\0' ? 0 : -1;
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20 || c == 0x7f) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void print_field(const char *key, const char *value) {
  if (value[0] == '\0') return;
  printf(",\"%s\":", key);
  json_string(value);
}

static void print_neighbour(const char *iface, const struct neighbour *nb) {
  printf("{\"interface\":");
  json_string(iface);
  print_field("chassis_id", nb->chassis);
  print_field("port_id", nb->port);
  print_field("port_description", nb->port_desc);
  print_field("system_name", nb->sys_name);
  print_field("management_address", nb->mgmt);
  printf(",\"vlans\":[");
  for (int i = 0; i < nb->nvlans; i++) printf(i == 0 ? "%d" : ",%d", nb->vlans[i]);
  printf("]}\n");
  fflush(stdout);
}

/* Brings `iface` up if it is down: a switch port only talks to a link that is up. */
static void link_up(int fd, const char *iface) {
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface);
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags & IFF_UP) != 0) return;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) perror("rackside-lldp: link up");
}

/* A socket receiving LLDP frames on `iface` only (brought up); -1 (with a message) when it cannot. */
static int open_lldp(const char *iface) {
  unsigned int index = if_nametoindex(iface);
  if (index == 0) { fprintf(stderr, "rackside-lldp: no interface %s\n", iface); return -1; }
  int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_LLDP));
  if (fd < 0) { perror("rackside-lldp: socket"); return -1; }
  link_up(fd, iface);
  struct sockaddr_ll addr = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_LLDP), .sll_ifindex = (int)index };
  struct packet_mreq mreq = { .mr_ifindex = (int)index, .mr_type = PACKET_MR_MULTICAST, .mr_alen = 6, .mr_address = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e } };
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) < 0) {
    perror("rackside-lldp: bind");
    close(fd);
    return -1;
  }
  return fd;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv) {
  /* --version: the ramdisk's selftest runs every host tool this way (images/ramdisk/init). */
  if (argc == 2 && strcmp(argv[1], "--version") == 0) { puts("rackside-lldp 1"); return 0; }
  if (argc < 3) { fprintf(stderr, "usage: rackside-lldp SECONDS IFACE...\n"); return 2; }
  long deadline = now_ms() + atol(argv[1]) * 1000L;
  struct pollfd fds[MAX_IFACES];
  const char *names[MAX_IFACES];
  int n = 0, waiting = 0;
  for (int i = 2; i < argc && n < MAX_IFACES; i++) {
    int fd = open_lldp(argv[i]);
    if (fd < 0) continue;
    fds[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
    names[n++] = argv[i];
    waiting++;
  }
  unsigned char frame[1600];
  while (waiting > 0) {
    long left = deadline - now_ms();
    if (left <= 0 || poll(fds, (nfds_t)n, (int)left) <= 0) break;
    for (int i = 0; i < n; i++) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      struct neighbour nb;
      if ((fds[i].revents & POLLIN) == 0) {
        fprintf(stderr, "rackside-lldp: %s: socket error (link down?), not listening there\n", names[i]);
      } else {
        ssize_t got = recv(fds[i].fd, frame, sizeof frame, 0);
        if (got <= (ssize_t)sizeof(struct ether_header) || parse_lldpdu(frame + sizeof(struct ether_header), (int)got - (int)sizeof(struct ether_header), &nb) != 0) continue;
        print_neighbour(names[i], &nb);
      }
      close(fds[i].fd);
      fds[i].fd = -1; /* poll ignores negative descriptors */
      waiting--;
    }
  }
  return 0;
}
