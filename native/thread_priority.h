/*
 * thread_priority.h — how the addons' bulk-data threads (the TFTP transfer thread,
 * native/udp-bind/tftp_pump.c; the boot HTTP sender threads, native/sendfile/sender_thread.c)
 * share the CPU with the event loop.
 *
 * The event loop decides (DHCP answers, TFTP requests and hand-backs, the API, reconciles);
 * these threads only move bytes the event loop already decided on. Each runs under SCHED_BATCH
 * at normal priority (sched(7); "Nice" below): the scheduler treats it as CPU-bound and never lets its
 * wake-up preempt a running thread, so a sender woken by a socket with room no longer takes the
 * core from the event loop in the middle of a turn — the mechanism by which bulk threads delayed
 * the loop in PXE storms. It keeps its full weight, so other nice-0 work on the head node cannot
 * starve the boot downloads.
 *
 * Measured (docs/PERFORMANCE.md, "Boot HTTP against nginx"): the previous policy, ten nice
 * levels down at SCHED_OTHER, bought the storm's event loop a few milliseconds against plain
 * nice 0 but let two CPU-bound nice-0 processes cut the 8-client download to 0.43–0.55× nginx;
 * SCHED_BATCH at nice 0 kept it at 1.61× with the storm's event loop within the same spread.
 *
 * Linux keeps the policy per thread: sched_setscheduler(2) with a thread ID acts on that thread
 * only. Moving from SCHED_OTHER to SCHED_BATCH needs no privilege (RestrictRealtime= in a
 * systemd unit forbids only the real-time policies). Best effort: a failure leaves the thread as
 * it was.
 *
 * Nice: never above normal priority. The unit starts the agent at Nice=-5 (systemd/rackside.service)
 * so that its event loop outranks the head node's other work and its own bulk threads; a bulk
 * thread starts with its creator's nice value (the event loop's) and moves itself back to 0, where
 * it has the weight of any other nice-0 work. A thread started at 0 or below normal priority (an
 * operator's Nice=10) keeps its value. Raising one's own nice value needs no privilege
 * (setpriority(2)); the nice value too is per thread on Linux (setpriority(2), "BUGS").
 */
#ifndef RACKSIDE_THREAD_PRIORITY_H
#define RACKSIDE_THREAD_PRIORITY_H

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The nice value bulk threads never run above: normal priority. */
#define BULK_THREAD_MIN_NICE 0

/* Puts the calling thread under SCHED_BATCH and at a nice value of at least BULK_THREAD_MIN_NICE. */
static inline void make_bulk_thread(void) {
  pid_t tid = (pid_t)syscall(SYS_gettid);
  struct sched_param param = {0};
  (void)syscall(SYS_sched_setscheduler, tid, SCHED_BATCH, &param);
  errno = 0;
  int nice_value = getpriority(PRIO_PROCESS, (id_t)tid); /* -1 is a valid nice value: errno tells */
  if (errno == 0 && nice_value < BULK_THREAD_MIN_NICE) (void)setpriority(PRIO_PROCESS, (id_t)tid, BULK_THREAD_MIN_NICE);
}

#endif
