/**
 * @module Routes of the virtual BMC outside the Systems tree: the service root, Managers with
 * VirtualMedia (InsertMedia/EjectMedia actions and PATCH; iLO 5 flavor wants a JSON body on
 * EjectMedia), iDRAC Jobs, SessionService, TaskService with task monitors (202 while running,
 * then 200 with the Task), EventService (subscriptions and SubmitTestEvent), UpdateService
 * (FirmwareInventory, SimpleUpdate as a task), Registries with the BIOS AttributeRegistry,
 * and a minimal Chassis.
 */
import { randomBytes } from 'node:crypto';
import type { LabContext, Route, RouteRequest, RouteResponse } from './lab-context.js';
import { biosRegistry, collection, manager, serviceRoot, subscription, task, virtualMedia, type Payload } from './payloads.js';
import type { VirtualMediaSlotState } from './state.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const REGISTRY = 'BiosAttributeRegistry.v1_0_0';

/** Builds the non-System routes. */
export function serviceRoutes(lab: LabContext): Route[] {
  const { state, paths } = lab;
  const M = `^/redfish/v1/Managers/${state.managerId.replace(/\./g, '\\.')}`;
  const get = (pattern: string, fn: (req: RouteRequest) => Payload | undefined): Route => ({
    method: 'GET', pattern: new RegExp(`^/redfish/v1${pattern}$`),
    handle: (req) => {
      const payload = fn(req);
      return payload === undefined ? lab.error(404, 'Base.1.16.ResourceMissingAtURI', `${req.path} not found`) : lab.ok(payload);
    },
  });
  const slotOf = (req: RouteRequest): VirtualMediaSlotState | undefined => state.media.find((m) => m.id === req.params[0]);
  const mediaAction = (eject: boolean) => async (req: RouteRequest): Promise<RouteResponse> => {
    const slot = slotOf(req);
    if (slot === undefined) return lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such virtual media');
    if (eject) {
      if (state.flavor === 'ilo5' && req.body === undefined) return lab.error(400, 'Base.1.16.MalformedJSON', 'a JSON body is required');
      slot.image = undefined;
      slot.inserted = false;
      if (slot.mediaTypes.includes('CD')) for (const s of state.systems.values()) await s.backend.ejectMedia();
      return { status: 204 };
    }
    const image = isObject(req.body) ? req.body.Image : undefined;
    if (typeof image !== 'string' || !/^https?:\/\//.test(image)) return lab.error(400, 'Base.1.16.ActionParameterValueFormatError', 'Image must be an http(s) URL');
    if (slot.inserted) return lab.error(409, 'Base.1.16.ResourceInUse', 'media already inserted; eject first');
    if (state.knobs.insertNeedsTransferProtocol && !(isObject(req.body) && typeof req.body.TransferProtocolType === 'string')) {
      return lab.error(400, 'Base.1.16.ActionParameterMissing', 'The action InsertMedia requires the parameter TransferProtocolType to be present in the request body.');
    }
    slot.image = image;
    slot.inserted = true;
    slot.writeProtected = !(isObject(req.body) && req.body.WriteProtected === false);
    if (slot.mediaTypes.includes('CD')) for (const s of state.systems.values()) await s.backend.insertMedia(image);
    return { status: 204 };
  };
  const subscriptionsRest = 'EventService/Subscriptions';

  return [
    get('', () => serviceRoot(state, paths)),
    get('/Chassis', () => collection(paths, 'Chassis', 'ChassisCollection', 'Chassis', ['Chassis/1'])),
    get('/Chassis/1', () => ({ '@odata.id': paths.at('Chassis/1'), '@odata.type': '#Chassis.v1_23_0.Chassis', Id: '1', Name: 'Chassis', ChassisType: 'RackMount' })),
    get('/Managers', () => collection(paths, 'Managers', 'ManagerCollection', 'Managers', [`Managers/${state.managerId}`])),
    { method: 'GET', pattern: new RegExp(`${M}$`), handle: () => lab.ok(manager(state, paths)) },
    { method: 'GET', pattern: new RegExp(`${M}/VirtualMedia$`), handle: () => lab.ok(collection(paths, `Managers/${state.managerId}/VirtualMedia`, 'VirtualMediaCollection', 'Virtual Media', state.media.map((m) => `Managers/${state.managerId}/VirtualMedia/${m.id}`))) },
    {
      method: 'GET', pattern: new RegExp(`${M}/VirtualMedia/([^/]+)$`),
      handle: (req) => {
        const slot = slotOf(req);
        return slot === undefined ? lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such virtual media') : lab.ok(virtualMedia(state, paths, slot));
      },
    },
    { method: 'POST', pattern: new RegExp(`${M}/VirtualMedia/([^/]+)/Actions/VirtualMedia\\.InsertMedia$`), handle: mediaAction(false) },
    { method: 'POST', pattern: new RegExp(`${M}/VirtualMedia/([^/]+)/Actions/VirtualMedia\\.EjectMedia$`), handle: mediaAction(true) },
    {
      method: 'POST', pattern: new RegExp(`${M}/Jobs$`),
      handle: (req) => {
        if (state.flavor !== 'idrac') return lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no job service');
        const target = isObject(req.body) ? req.body.TargetSettingsURI : undefined;
        if (typeof target !== 'string' || !/\/Bios\/Settings\/?$/.test(target)) return lab.error(400, 'Base.1.16.PropertyValueIncorrect', 'TargetSettingsURI');
        const id = `JID_${String(900000000000 + state.nextId())}`;
        state.jobs.set(id, { id, target, state: 'Scheduled' });
        return { status: 200, headers: { location: paths.at(`Managers/${state.managerId}/Jobs/${id}`) } };
      },
    },
    {
      method: 'GET', pattern: new RegExp(`${M}/Jobs/([^/]+)$`),
      handle: (req) => {
        const job = state.jobs.get(req.params[0] ?? '');
        if (job === undefined) return lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such job');
        return lab.ok({
          '@odata.id': paths.at(`Managers/${state.managerId}/Jobs/${job.id}`), '@odata.type': '#DellJob.v1_5_0.DellJob', Id: job.id,
          JobState: job.state, JobType: 'BIOSConfiguration', Name: 'Configure: BIOS.Setup.1-1', PercentComplete: job.state === 'Completed' ? 100 : 0,
          Message: job.state === 'Completed' ? 'Job completed successfully.' : 'Task successfully scheduled.', TargetSettingsURI: null,
        });
      },
    },
    get('/SessionService', () => ({ '@odata.id': paths.at('SessionService'), '@odata.type': '#SessionService.v1_1_9.SessionService', Id: 'SessionService', ServiceEnabled: true, SessionTimeout: 1800, Sessions: paths.link('SessionService/Sessions') })),
    get('/SessionService/Sessions', () => collection(paths, 'SessionService/Sessions', 'SessionCollection', 'Sessions', [...state.sessions.values()].map((s) => `SessionService/Sessions/${s.id}`))),
    {
      method: 'POST', pattern: /^\/redfish\/v1\/SessionService\/Sessions$/,
      handle: (req) => {
        if (!state.knobs.sessions) return lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'sessions are disabled');
        const user = isObject(req.body) ? req.body.UserName : undefined;
        const pass = isObject(req.body) ? req.body.Password : undefined;
        if (user !== state.username || pass !== state.password) return lab.error(401, 'Base.1.16.NoValidSession', 'invalid credentials');
        const id = String(state.nextId());
        const token = randomBytes(16).toString('hex');
        state.sessions.set(id, { id, token });
        const location = paths.at(`SessionService/Sessions/${id}`);
        return { status: 201, headers: { 'x-auth-token': token, location }, body: { '@odata.id': location, '@odata.type': '#Session.v1_7_0.Session', Id: id, UserName: user } };
      },
    },
    get('/SessionService/Sessions/([^/]+)', (req) => (state.sessions.has(req.params[0] ?? '') ? { '@odata.id': paths.at(`SessionService/Sessions/${req.params[0] ?? ''}`), Id: req.params[0], UserName: state.username } : undefined)),
    {
      method: 'DELETE', pattern: /^\/redfish\/v1\/SessionService\/Sessions\/([^/]+)$/,
      handle: (req) => (state.sessions.delete(req.params[0] ?? '') ? { status: 204 } : lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such session')),
    },
    get('/TaskService', () => ({ '@odata.id': paths.at('TaskService'), '@odata.type': '#TaskService.v1_2_0.TaskService', Id: 'TaskService', ServiceEnabled: true, Tasks: paths.link('TaskService/Tasks') })),
    get('/TaskService/Tasks', () => collection(paths, 'TaskService/Tasks', 'TaskCollection', 'Tasks', [...state.tasks.keys()].map((id) => `TaskService/Tasks/${id}`))),
    {
      method: 'GET', pattern: /^\/redfish\/v1\/TaskService\/(Tasks|TaskMonitors)\/([^/]+)$/,
      handle: async (req) => {
        const t = state.tasks.get(req.params[1] ?? '');
        if (t === undefined) return lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such task');
        await lab.pollTask(t);
        const body = task(paths, t);
        if (req.params[0] === 'TaskMonitors' && (t.state === 'Running' || t.state === 'Pending')) return { status: 202, body, headers: { location: paths.at(`TaskService/TaskMonitors/${t.id}`), 'retry-after': '0' } };
        return lab.ok(body);
      },
    },
    get('/EventService', () => ({
      '@odata.id': paths.at('EventService'), '@odata.type': '#EventService.v1_10_0.EventService', Id: 'EventService', ServiceEnabled: true,
      DeliveryRetryAttempts: 3, EventTypesForSubscription: ['Alert', 'StatusChange'], Subscriptions: paths.link(subscriptionsRest),
      Actions: { '#EventService.SubmitTestEvent': { target: paths.at('EventService/Actions/EventService.SubmitTestEvent') } },
    })),
    get('/EventService/Subscriptions', () => collection(paths, subscriptionsRest, 'EventDestinationCollection', 'Subscriptions', [...state.subscriptions.keys()].map((id) => `${subscriptionsRest}/${id}`))),
    get('/EventService/Subscriptions/([^/]+)', (req) => {
      const s = state.subscriptions.get(req.params[0] ?? '');
      return s === undefined ? undefined : subscription(paths, s);
    }),
    {
      method: 'POST', pattern: /^\/redfish\/v1\/EventService\/Subscriptions$/,
      handle: (req) => {
        const b = isObject(req.body) ? req.body : {};
        if (typeof b.Destination !== 'string' || !/^https?:\/\//.test(b.Destination)) return lab.error(400, 'Base.1.16.PropertyValueFormatError', 'Destination');
        if (b.Protocol !== 'Redfish') return lab.error(400, 'Base.1.16.PropertyValueNotInList', 'Protocol');
        const headers: Record<string, string> = {};
        for (const h of Array.isArray(b.HttpHeaders) ? b.HttpHeaders : []) {
          if (isObject(h)) for (const [k, v] of Object.entries(h)) if (typeof v === 'string') headers[k] = v;
        }
        const id = String(state.nextId());
        state.subscriptions.set(id, { id, destination: b.Destination, context: typeof b.Context === 'string' ? b.Context : '', headers });
        return { status: 201, headers: { location: paths.at(`${subscriptionsRest}/${id}`) } };
      },
    },
    {
      method: 'DELETE', pattern: /^\/redfish\/v1\/EventService\/Subscriptions\/([^/]+)$/,
      handle: (req) => (state.subscriptions.delete(req.params[0] ?? '') ? { status: 204 } : lab.error(404, 'Base.1.16.ResourceMissingAtURI', 'no such subscription')),
    },
    {
      method: 'POST', pattern: /^\/redfish\/v1\/EventService\/Actions\/EventService\.SubmitTestEvent$/,
      handle: () => { lab.emitEvent('TestEvent.1.0.TestEvent', 'Test event', 'EventService'); return { status: 204 }; },
    },
    get('/UpdateService', () => ({
      '@odata.id': paths.at('UpdateService'), '@odata.type': '#UpdateService.v1_11_0.UpdateService', Id: 'UpdateService', ServiceEnabled: true,
      FirmwareInventory: paths.link('UpdateService/FirmwareInventory'),
      Actions: { '#UpdateService.SimpleUpdate': { target: paths.at('UpdateService/Actions/UpdateService.SimpleUpdate'), 'TransferProtocol@Redfish.AllowableValues': ['HTTP', 'HTTPS'] } },
    })),
    get('/UpdateService/FirmwareInventory', () => collection(paths, 'UpdateService/FirmwareInventory', 'SoftwareInventoryCollection', 'Firmware', state.firmware.map((f) => `UpdateService/FirmwareInventory/${f.id}`))),
    get('/UpdateService/FirmwareInventory/([^/]+)', (req) => {
      const f = state.firmware.find((x) => x.id === req.params[0]);
      return f === undefined ? undefined : {
        '@odata.id': paths.at(`UpdateService/FirmwareInventory/${f.id}`), '@odata.type': '#SoftwareInventory.v1_10_0.SoftwareInventory',
        Id: f.id, Name: f.name, Version: f.version, Updateable: f.updateable, Status: { State: 'Enabled', Health: 'OK' },
      };
    }),
    {
      method: 'POST', pattern: /^\/redfish\/v1\/UpdateService\/Actions\/UpdateService\.SimpleUpdate$/,
      handle: (req) => {
        const b = isObject(req.body) ? req.body : {};
        const image = b.ImageURI;
        if (typeof image !== 'string' || !/^https?:\/\//.test(image)) return lab.error(400, 'Base.1.16.ActionParameterValueFormatError', 'ImageURI');
        const targets = Array.isArray(b.Targets) ? b.Targets.filter((t): t is string => typeof t === 'string').map((t) => t.replace(/\/+$/, '').split('/').pop() ?? '') : [state.firmware[1]?.id ?? 'BIOS'];
        const items = targets.map((id) => state.firmware.find((f) => f.id === id));
        if (items.some((f) => f === undefined || !f.updateable)) return lab.error(400, 'Base.1.16.ActionParameterValueNotInList', 'Targets');
        const version = /[0-9]+(?:\.[0-9]+)+/.exec(image.split('/').pop() ?? '')?.[0] ?? 'updated';
        const fail = state.knobs.failNextTask;
        state.knobs.failNextTask = false;
        const t = lab.startTask('Firmware update', () => {
          if (fail) return Promise.reject(new Error('image verification failed'));
          for (const f of items) if (f !== undefined) f.version = version;
          return Promise.resolve();
        });
        if (state.knobs.updatesApplyAtReset) {
          t.state = 'Pending';
          t.messages.push('Firmware update scheduled: it applies at the next system reset');
        }
        return lab.accepted(t, task(paths, t));
      },
    },
    get('/Registries', () => collection(paths, 'Registries', 'MessageRegistryFileCollection', 'Registries', ['Registries/Base.1.16.0', `Registries/${REGISTRY}`])),
    get('/Registries/Base\\.1\\.16\\.0', () => ({ '@odata.id': paths.at('Registries/Base.1.16.0'), '@odata.type': '#MessageRegistryFile.v1_1_3.MessageRegistryFile', Id: 'Base.1.16.0', Registry: 'Base.1.16', Location: [{ Language: 'en', PublicationUri: 'https://redfish.dmtf.org/registries/Base.1.16.0.json' }] })),
    get(`/Registries/${REGISTRY.replace(/\./g, '\\.')}`, () => ({
      '@odata.id': paths.at(`Registries/${REGISTRY}`), '@odata.type': '#MessageRegistryFile.v1_1_3.MessageRegistryFile', Id: REGISTRY, Registry: REGISTRY,
      Languages: ['en'], Location: [{ Language: 'en', Uri: paths.at(`Registries/${REGISTRY}/${REGISTRY}.json`) }],
    })),
    get(`/Registries/${REGISTRY.replace(/\./g, '\\.')}/${REGISTRY.replace(/\./g, '\\.')}\\.json`, () => biosRegistry(paths)),
  ];
}
