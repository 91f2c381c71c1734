/**
 * @module systemd readiness and watchdog over `NOTIFY_SOCKET` (sd_notify(3)): `READY=1` once
 * the agent serves, `STATUS=` lines, `STOPPING=1` on shutdown, and `WATCHDOG=1` every half
 * `WATCHDOG_USEC` from a timer on the event loop — so a blocked loop stops the pings and
 * systemd restarts the agent. Without `NOTIFY_SOCKET` every call is a no-op.
 */
import { createRequire } from 'node:module';
import type { UnixDgramSocket } from 'unix-dgram';

/** The notification side of the agent's systemd integration. */
export interface Notifier {
  /** True when a notify socket is configured. */
  readonly enabled: boolean;
  ready(status?: string): void;
  status(text: string): void;
  stopping(): void;
  /** Sends `WATCHDOG=1` now. */
  watchdog(): void;
  /** Starts periodic watchdog pings when `WATCHDOG_USEC` asks for them; returns the interval in ms or undefined. */
  startWatchdog(): number | undefined;
  close(): void;
}

/** The environment systemd hands a `Type=notify` service (read by agent/main.ts). */
export interface NotifyEnvironment {
  NOTIFY_SOCKET?: string;
  WATCHDOG_USEC?: string;
  WATCHDOG_PID?: string;
}

/** Watchdog ping interval: half of `WATCHDOG_USEC`, when it is meant for this process. */
export function watchdogIntervalMs(env: NotifyEnvironment, pid: number): number | undefined {
  const usec = Number(env.WATCHDOG_USEC ?? '');
  if (!Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return Math.max(1, Math.floor(usec / 2000));
}

const NOOP: Notifier = {
  enabled: false,
  ready: () => undefined,
  status: () => undefined,
  stopping: () => undefined,
  watchdog: () => undefined,
  startWatchdog: () => undefined,
  close: () => undefined,
};

/**
 * Creates the notifier. Abstract sockets (`@name`) are not supported by unix-dgram; systemd's
 * system manager uses the path `/run/systemd/notify`, which is.
 * @param onError receives send failures (never thrown: notification is best effort).
 */
export function createNotifier(env: NotifyEnvironment, pid: number, onError: (err: Error) => void): Notifier {
  const path = env.NOTIFY_SOCKET;
  if (path === undefined || path === '') return NOOP;
  if (path.startsWith('@')) {
    onError(new Error(`NOTIFY_SOCKET ${path} is an abstract socket, which rackside cannot reach; readiness is not reported`));
    return NOOP;
  }
  const require = createRequire(import.meta.url);
  const unixDgram = require('unix-dgram') as typeof import('unix-dgram');
  let socket: UnixDgramSocket | undefined = unixDgram.createSocket('unix_dgram');
  socket.on('error', (err: Error) => {
    onError(err);
  });
  let timer: NodeJS.Timeout | undefined;
  const send = (text: string): void => {
    if (socket === undefined) return;
    const buf = Buffer.from(text);
    socket.send(buf, 0, buf.length, path, (err) => {
      if (err !== undefined) onError(err);
    });
  };
  const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ');
  return {
    enabled: true,
    ready: (status) => {
      send(status === undefined ? 'READY=1' : `READY=1\nSTATUS=${oneLine(status)}`);
    },
    status: (text) => {
      send(`STATUS=${oneLine(text)}`);
    },
    stopping: () => {
      send('STOPPING=1');
    },
    watchdog: () => {
      send('WATCHDOG=1');
    },
    startWatchdog: () => {
      const intervalMs = watchdogIntervalMs(env, pid);
      if (intervalMs === undefined) return undefined;
      clearInterval(timer);
      timer = setInterval(() => {
        send('WATCHDOG=1');
      }, intervalMs);
      return intervalMs;
    },
    close: () => {
      clearInterval(timer);
      socket?.close();
      socket = undefined;
    },
  };
}
