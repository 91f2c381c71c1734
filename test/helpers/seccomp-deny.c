/*
 * seccomp-deny — runs a command with some system calls failing with EPERM, as a systemd unit's
 * SystemCallFilter= with SystemCallErrorNumber=EPERM makes them fail. For
 * test/integration/systemd.test.ts, which compiles it with cc: the calls the unit denies that
 * the agent's tools still make must be ones they survive.
 *
 *   seccomp-deny NR[,NR…] COMMAND [ARG…]
 *
 * NR are this architecture's system call numbers. Sets no_new_privs (seccomp(2) needs it without
 * CAP_SYS_ADMIN), installs the filter and execs COMMAND; the filter stays on its children.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_DENIED 32

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: seccomp-deny NR[,NR...] COMMAND [ARG...]\n");
    return 2;
  }
  long denied[MAX_DENIED];
  int count = 0;
  for (char* p = argv[1]; *p != '\0' && count < MAX_DENIED;) {
    char* end = NULL;
    denied[count++] = strtol(p, &end, 10);
    if (end == p) {
      fprintf(stderr, "seccomp-deny: bad system call number list %s\n", argv[1]);
      return 2;
    }
    p = *end == ',' ? end + 1 : end;
  }
  struct sock_filter filter[2 + 2 * MAX_DENIED];
  int n = 0;
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (int i = 0; i < count; i++) {
    filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[i], 0, 1);
    filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  }
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog program = {.len = (unsigned short)n, .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("seccomp-deny: prctl");
    return 1;
  }
  execvp(argv[2], argv + 2);
  perror("seccomp-deny: exec");
  return 127;
}
