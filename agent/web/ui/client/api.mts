/**
 * @module The status page's client of the management API (same origin, `/api/v1`). The
 * management token is entered once per browser tab and kept in sessionStorage; it is sent as
 * `Authorization: Bearer` (RFC 6750 §2.1) on mutations only. Errors become {@link ApiFailure}
 * with the API's `{ error: { code, message, field } }` text, so a 401 reads clearly.
 */
import type { EraseRecord } from '../../../erase/document.js';
import type { BareMetalHost } from '../../../host/types.js';
import type { StoredEvent } from '../../../store/types.js';
import type { HostBootTransport } from '../boot-transport.js';
import type { AgentStatusReport } from '../status-report.js';

const API = '/api/v1';
const TOKEN_KEY = 'rackside.managementToken';

/** A failed API call: HTTP status (0 = network failure) and the server's message. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The stored management token, if one was entered in this tab. */
export function storedToken(): string | undefined {
  try {
    const token = window.sessionStorage.getItem(TOKEN_KEY);
    return token === null || token === '' ? undefined : token;
  } catch {
    return undefined;
  }
}

/** Stores (or with `undefined`, forgets) the management token for this tab. */
export function storeToken(token: string | undefined): void {
  try {
    if (token === undefined || token === '') window.sessionStorage.removeItem(TOKEN_KEY);
    else window.sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage disabled: the token lives only until the page is left.
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function failureOf(response: Response): Promise<ApiFailure> {
  let code = `http-${response.status}`;
  let message = `${response.status} ${response.statusText}`;
  try {
    const body: unknown = await response.json();
    const error = isRecord(body) ? body.error : undefined;
    if (isRecord(error)) {
      if (typeof error.code === 'string') code = error.code;
      if (typeof error.message === 'string') message = error.message;
    }
  } catch {
    // Not JSON: keep the status line.
  }
  if (response.status === 401) message = `Refused (401 Unauthorized): ${message}. Enter the management token with "Set token…".`;
  return new ApiFailure(response.status, code, message);
}

async function request(method: string, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = storedToken();
  if (method !== 'GET' && token !== undefined) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${API}${path}`, { method, headers, cache: 'no-store', credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  } catch (error: unknown) {
    throw new ApiFailure(0, 'network', `the agent did not answer (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!response.ok) throw await failureOf(response);
  if (response.status === 204) return undefined;
  return response.json();
}

const seg = encodeURIComponent;

function items<T>(body: unknown): T[] {
  return isRecord(body) && Array.isArray(body.items) ? (body.items as T[]) : [];
}

/** Facts about the agent (`GET /version`). */
export interface AgentVersion {
  version: string;
  agentId: string;
  provisioner: string;
  startedAt: string;
}

/** The calls the pages make. */
export const api = {
  version: async (): Promise<AgentVersion> => (await request('GET', '/version')) as AgentVersion,
  listHosts: async (): Promise<BareMetalHost[]> => items<BareMetalHost>(await request('GET', '/hosts')),
  getHost: async (name: string): Promise<BareMetalHost> => (await request('GET', `/hosts/${seg(name)}`)) as BareMetalHost,
  latestEvents: async (limit: number): Promise<StoredEvent[]> => items<StoredEvent>(await request('GET', `/events?limit=${limit}`)),
  hostEvents: async (name: string, limit: number): Promise<StoredEvent[]> => items<StoredEvent>(await request('GET', `/hosts/${seg(name)}/events?limit=${limit}`)),
  /**
   * The host's boot timeline (flight recorder + host events) from `GET /hosts/:name/timeline`;
   * falls back to the host's own events while that route is not mounted (404 `not-found` of the router).
   */
  hostTimeline: async (name: string, limit: number): Promise<{ events: StoredEvent[]; source: 'timeline' | 'events' }> => {
    try {
      return { events: items<StoredEvent>(await request('GET', `/hosts/${seg(name)}/timeline?limit=${limit}`)), source: 'timeline' };
    } catch (error: unknown) {
      if (!(error instanceof ApiFailure) || error.status !== 404 || !/no route/i.test(error.message)) throw error;
      return { events: await api.hostEvents(name, limit), source: 'events' };
    }
  },
  /** How each MAC last booted, by transport (`GET /boot/transports`; [] from an agent without the route). */
  bootTransports: async (): Promise<HostBootTransport[]> => items<HostBootTransport>(await request('GET', '/boot/transports')),
  /** The host's signed erase records, newest first ([] from an agent without the route). */
  eraseRecords: async (name: string): Promise<EraseRecord[]> => {
    try {
      return items<EraseRecord>(await request('GET', `/erase-records?host=${seg(name)}`));
    } catch (error: unknown) {
      if (error instanceof ApiFailure && error.status === 404) return [];
      throw error;
    }
  },
  /** Controller sync status, or undefined when the route is absent. */
  sync: async (): Promise<Record<string, unknown> | undefined> => optional(request('GET', '/sync')),
  /** The optional agent status document, or undefined while `/api/v1/status` does not exist. */
  status: async (): Promise<AgentStatusReport | undefined> => optional(request('GET', '/status')),
  /**
   * `POST /hosts/:name/enroll` (docs/discovery.md): `{}` applies the BMC discovery proposed;
   * `{bmcAddress, username, password}` gives one. Answers the host (202).
   */
  enroll: async (name: string, bmc?: { bmcAddress: string; username: string; password: string }): Promise<BareMetalHost> =>
    (await request('POST', `/hosts/${seg(name)}/enroll`, bmc ?? {})) as BareMetalHost,
  hostAction: async (name: string, action: string, body?: Record<string, unknown>): Promise<BareMetalHost> =>
    (await request('POST', `/hosts/${seg(name)}/actions/${seg(action)}`, body ?? {})) as BareMetalHost,
  /** Replaces the host's spec (metadata.resourceVersion guards against a concurrent change). */
  putHost: async (host: Pick<BareMetalHost, 'apiVersion' | 'kind' | 'metadata' | 'spec'>): Promise<BareMetalHost> => {
    const { name, namespace, annotations, labels, resourceVersion } = host.metadata;
    const manifest = { apiVersion: host.apiVersion, kind: host.kind, metadata: { name, namespace, resourceVersion, ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) }, spec: host.spec };
    return (await request('PUT', `/hosts/${seg(name)}`, manifest)) as BareMetalHost;
  },
};

async function optional(pending: Promise<unknown>): Promise<Record<string, unknown> | undefined> {
  try {
    const body = await pending;
    return isRecord(body) ? body : undefined;
  } catch (error: unknown) {
    if (error instanceof ApiFailure && error.status === 404) return undefined;
    throw error;
  }
}
