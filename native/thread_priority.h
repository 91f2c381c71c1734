/*
 * thread_priority.h — how the addons' bulk-data threads (the TFTP transfer thread,
 * native/udp-bind/tftp_pump.c; the boot HTTP sender threads, native/sendfile/sender_thread.c)
 * share the CPU with the event loop.
 *
 * The event loop decides (DHCP answers, TFTP requests and hand-backs, the API, reconciles);
 * these threads only move bytes the event loop already decided on. Each runs under SCHED_BATCH
 * at its creator's nice value (sched(7)): the scheduler treats it as CPU-bound and never lets its
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
 */
#ifndef RACKSIDE_THREAD_PRIORITY_H
#define RACKSIDE_THREAD_PRIORITY_H

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Puts the calling thread under SCHED_BATCH, keeping its nice value. */
static inline void make_bulk_thread(void) {
  struct sched_param param = {0};
  (void)syscall(SYS_sched_setscheduler, (pid_t)syscall(SYS_gettid), SCHED_BATCH, &param);
}

#endif
