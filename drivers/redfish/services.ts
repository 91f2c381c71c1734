/**
 * @module Redfish services: firmware (UpdateService `FirmwareInventory` and
 * `#UpdateService.SimpleUpdate` with `ImageURI`/`TransferProtocol`/`Targets`, followed as a
 * task), tasks (task monitors, Task resources and iDRAC jobs read through the client), and
 * event subscriptions (EventService `Subscriptions`: POST an EventDestination with
 * `Destination`, `Context`, `Protocol: Redfish` and `HttpHeaders` as a list of one-header
 * objects, as Ironic sends them; `EventTypes: [Alert]` only where the service lists it).
 */
import type { EventSubscriptionControl, FirmwareComponent, FirmwareControl, TaskControl } from '../capabilities.js';
import type { RedfishContext } from './context.js';
import { httpStatusOf } from './http-errors.js';
import {
  expectObject, isJsonObject, lastSegment, readActionTarget, readLink, readString, readStringList, redfishProtocolError, type JsonObject,
} from './json.js';
import { decodeEventDestination, decodeSoftwareInventory, type SoftwareInventoryItem } from './resources.js';

/** metal3 component name of a firmware item: `bmc`, `bios`, `nic:<id>`, else the id. */
export function firmwareComponentOf(item: Pick<SoftwareInventoryItem, 'id' | 'name'>): string {
  const text = `${item.id} ${item.name}`;
  if (/idrac|\bilo\b|\bbmc\b|manager|baseboard management/i.test(text)) return 'bmc';
  if (/bios|system rom|uefi firmware/i.test(text)) return 'bios';
  if (/\bnic\b|nic\.|ethernet|network adapter/i.test(text)) return `nic:${item.id}`;
  return item.id;
}

async function serviceObject(ctx: RedfishContext, uri: string | undefined, what: string): Promise<{ uri: string; body: JsonObject }> {
  if (uri === undefined) throw redfishProtocolError(ctx.at('/redfish/v1'), `the service root has no ${what}`);
  const { value } = await ctx.fetch(uri, (b, c) => expectObject(b, c));
  return { uri, body: value };
}

/** Builds the firmware capability (inventory member paths are remembered for `Targets`). */
export function createFirmwareControl(ctx: RedfishContext): FirmwareControl {
  const updateService = async (operation: string): Promise<{ uri: string; body: JsonObject }> => {
    const root = await ctx.root();
    if (root.updateService === undefined) throw ctx.unsupported('firmware', operation, 'the BMC has no UpdateService');
    return serviceObject(ctx, root.updateService, 'UpdateService');
  };
  const inventory = async (operation: string): Promise<{ path: string; item: SoftwareInventoryItem }[]> => {
    const service = await updateService(operation);
    const collection = readLink(service.body, 'FirmwareInventory');
    if (collection === undefined) throw ctx.unsupported('firmware', operation, 'the UpdateService has no FirmwareInventory');
    const out: { path: string; item: SoftwareInventoryItem }[] = [];
    for (const member of await ctx.members(collection)) {
      if (ctx.quirks.skipFirmwareId(lastSegment(member))) continue;
      out.push({ path: member, item: (await ctx.fetch(member, decodeSoftwareInventory)).value });
    }
    return out;
  };
  return {
    async getFirmwareInventory(): Promise<FirmwareComponent[]> {
      return (await inventory('getFirmwareInventory')).map(({ item }) => ({ ...item, component: firmwareComponentOf(item) }));
    },
    async simpleUpdate(request) {
      const service = await updateService('simpleUpdate');
      const target = readActionTarget(service.body, '#UpdateService.SimpleUpdate');
      if (target === undefined) throw ctx.unsupported('firmware', 'simpleUpdate', 'the UpdateService has no SimpleUpdate action');
      const body: Record<string, unknown> = { ImageURI: request.imageUrl };
      if (/^https?:\/\//i.test(request.imageUrl)) body.TransferProtocol = request.imageUrl.toLowerCase().startsWith('https') ? 'HTTPS' : 'HTTP';
      if (request.targets !== undefined) {
        const items = await inventory('simpleUpdate');
        body.Targets = request.targets.map((id) => {
          const found = items.find(({ item }) => item.id === id);
          if (found === undefined) throw redfishProtocolError(ctx.at(service.uri), `unknown firmware component ${id}`);
          return found.path;
        });
      }
      const res = await ctx.client.post(target, body);
      const taskId = ctx.client.taskPathOf(res);
      if (taskId === undefined) throw redfishProtocolError(ctx.at(target), `SimpleUpdate answered HTTP ${res.status} without a task to follow`);
      return { taskId };
    },
  };
}

/** Builds the task capability: task ids are monitor/Task paths (or vendor job ids). */
export function createTaskControl(ctx: RedfishContext): TaskControl {
  return {
    async getTask(taskId) {
      const path = taskId.startsWith('/') ? taskId : await ctx.quirks.taskPath?.(ctx, taskId);
      if (path === undefined) throw redfishProtocolError(ctx.at(taskId), `unknown task ${taskId}`);
      try {
        const task = await ctx.client.readTask(path);
        return { id: taskId, state: task.state, percentComplete: task.percentComplete, messages: task.messages };
      } catch (err) {
        if (httpStatusOf(err) === 404) throw redfishProtocolError(ctx.at(path), `unknown task ${taskId}`);
        throw err;
      }
    },
  };
}

/** Builds the event subscription capability. */
export function createEventSubscriptionControl(ctx: RedfishContext): EventSubscriptionControl {
  const subscriptions = async (operation: string): Promise<{ uri: string; service: JsonObject }> => {
    const root = await ctx.root();
    if (root.eventService === undefined) throw ctx.unsupported('eventSubscriptions', operation, 'the BMC has no EventService');
    const service = await serviceObject(ctx, root.eventService, 'EventService');
    const uri = readLink(service.body, 'Subscriptions');
    if (uri === undefined) throw ctx.unsupported('eventSubscriptions', operation, 'the EventService has no Subscriptions');
    return { uri, service: service.body };
  };
  return {
    async createSubscription(request) {
      const { uri, service } = await subscriptions('createSubscription');
      const body: Record<string, unknown> = { Destination: request.destination, Protocol: 'Redfish', Context: request.context ?? '' };
      if (readStringList(service, 'EventTypesForSubscription')?.includes('Alert') === true) body.EventTypes = ['Alert'];
      if (request.httpHeaders !== undefined) body.HttpHeaders = Object.entries(request.httpHeaders).map(([k, v]) => ({ [k]: v }));
      const res = await ctx.client.post(uri, body);
      const created = res.location ?? (isJsonObject(res.body) ? readString(res.body, '@odata.id') : undefined);
      if (created === undefined) throw redfishProtocolError(ctx.at(uri), 'subscription created without a Location or @odata.id');
      return { id: lastSegment(created) };
    },
    async deleteSubscription(id) {
      const { uri } = await subscriptions('deleteSubscription');
      if (id === '' || id.includes('/')) throw redfishProtocolError(ctx.at(uri), `invalid subscription id "${id}"`);
      await ctx.client.delete(`${uri.replace(/\/+$/, '')}/${encodeURIComponent(id)}`, true);
    },
    async listSubscriptions() {
      const { uri } = await subscriptions('listSubscriptions');
      const out = [];
      for (const member of await ctx.members(uri)) {
        const { value } = await ctx.fetch(member, decodeEventDestination);
        out.push({ id: lastSegment(member), destination: value.destination, context: value.context });
      }
      return out;
    },
  };
}
