/*
 * thread_priority.h — the CPU priority of the addons' bulk-data threads (the TFTP transfer
 * thread, native/udp-bind/tftp_pump.c; the boot HTTP sender threads, native/sendfile/sender_thread.c).
 *
 * The event loop decides (DHCP answers, TFTP requests and hand-backs, the API, reconciles);
 * these threads only move bytes the event loop already decided on. On a head node whose cores
 * are busy — a PXE storm pushing gigabytes through sendfile(2), other services — the scheduler
 * shares the CPU by weight among runnable threads, and a bulk thread at the event loop's own
 * priority takes the core from it for whole time slices: every such slice is event-loop delay
 * for every client. So each bulk thread lowers its own priority by BULK_THREAD_NICE_STEPS nice
 * levels (weight 1024 → 110 per CFS's table, sched(7)) when it starts; it still gets every
 * cycle the event loop does not want, so throughput on an idle core is unchanged.
 * Measured: event-loop delay p99 in a 500-client storm 24 → 20 ms (docs/PERFORMANCE.md).
 *
 * Linux keeps the nice value per thread (setpriority(2), "BUGS": PRIO_PROCESS with a thread ID
 * acts on that thread only); a thread starts with its creator's value, so the step is relative
 * to whatever the service runs at (systemd's Nice=). Raising nice needs no privilege. Best
 * effort: a failure leaves the thread as it was.
 */
#ifndef RACKSIDE_THREAD_PRIORITY_H
#define RACKSIDE_THREAD_PRIORITY_H

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BULK_THREAD_NICE_STEPS 10
#define NICE_MAX 19

/* Lowers the calling thread's priority by `steps` nice levels (to at most NICE_MAX). */
static inline void lower_thread_priority(int steps) {
  id_t tid = (id_t)syscall(SYS_gettid);
  errno = 0;
  int current = getpriority(PRIO_PROCESS, tid);
  if (current == -1 && errno != 0) return;
  int target = current + steps > NICE_MAX ? NICE_MAX : current + steps;
  (void)setpriority(PRIO_PROCESS, tid, target);
}

#endif
