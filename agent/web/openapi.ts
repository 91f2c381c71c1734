/**
 * @module The OpenAPI 3.1 document of the management API, served at `GET /api/openapi.json`.
 * Written by hand beside the routes in api.ts; a test checks every route is covered.
 * @pure
 */
import { schemas, type Schema } from './openapi-schemas.js';

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema): Schema => ({ 'application/json': { schema } });
const ok = (description: string, name: string): Schema => ({ description, content: json(ref(name)) });
const errorRef = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });

/** Error responses every mutation can give. */
const mutationErrors = {
  '400': errorRef('BadRequest'), '401': errorRef('Unauthorized'), '404': errorRef('NotFound'),
  '409': errorRef('Conflict'), '413': errorRef('TooLarge'), '500': errorRef('Internal'),
};
const readErrors = { '400': errorRef('BadRequest'), '404': errorRef('NotFound'), '500': errorRef('Internal') };
const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'BareMetalHost name' };
const eventQuery = [
  { name: 'mac', in: 'query', schema: { type: 'string' }, description: 'Only events about this boot MAC' },
  { name: 'after', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'Only events with seq greater than this' },
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10000, default: 200 }, description: 'Newest N matching events' },
];
const manifestBody = {
  required: true,
  description: 'Multi-document YAML (`---` separated) or JSON: one manifest, an array, or {items: [...]}. At most 1 MiB.',
  content: { 'application/yaml': { schema: { type: 'string' } }, 'application/json': { schema: ref('ManifestList') } },
};

/** Builds the OpenAPI document; `version` is the agent's version. */
export function buildOpenApiDocument(version: string): Record<string, unknown> {
  const errorResponse = (description: string): Schema => ({ description, content: json(ref('Error')) });
  return {
    openapi: '3.1.0',
    info: {
      title: 'rackside management API',
      version,
      description: 'Hosts (metal3 BareMetalHost), secrets, actions and events of one rackside agent. ' +
        'Errors are always JSON {error: {code, message, field}}. Mutations need "Authorization: Bearer <token>" ' +
        'when the agent listens beyond loopback or has management.token set.',
    },
    servers: [{ url: '/' }],
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      responses: {
        BadRequest: errorResponse('Invalid input; `field` names the path to fix (also malformed YAML/JSON with line and column).'),
        Unauthorized: errorResponse('Missing or wrong bearer token.'),
        NotFound: errorResponse('No such object or route.'),
        Conflict: errorResponse('Stale resourceVersion or a change to an immutable field (named in `field`).'),
        TooLarge: errorResponse('Request body over the limit (1 MiB).'),
        Internal: errorResponse('Unexpected failure; the message has no stack trace.'),
      },
    },
    paths: {
      '/api/v1/hosts': {
        get: { operationId: 'listHosts', summary: 'List hosts', responses: { '200': ok('All hosts', 'BareMetalHostList'), '500': errorRef('Internal') } },
      },
      '/api/v1/hosts/{name}': {
        parameters: [nameParam],
        get: { operationId: 'getHost', summary: 'Get one host', responses: { '200': ok('The host', 'BareMetalHost'), ...readErrors } },
        put: {
          operationId: 'putHost', summary: 'Create or update one host (metadata.name must match the URL)', security: [{ bearer: [] }],
          requestBody: manifestBody,
          responses: { '200': ok('Updated', 'BareMetalHost'), '201': ok('Created', 'BareMetalHost'), '415': errorResponse('Unsupported Content-Type'), ...mutationErrors },
        },
        delete: {
          operationId: 'deleteHost', summary: 'Start deleting a host; it disappears when its delete flow ends', security: [{ bearer: [] }],
          responses: { '202': ok('Deletion started', 'BareMetalHost'), ...mutationErrors },
        },
      },
      '/api/v1/apply': {
        post: {
          operationId: 'apply',
          summary: 'Create or update BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents and HostUpdatePolicy manifests atomically',
          description: 'A HostFirmwareSettings whose host already reported its BIOS schema is checked against it: a setting the host would refuse is a 400 naming it (`spec.settings.<name>`).',
          security: [{ bearer: [] }],
          requestBody: manifestBody,
          responses: { '200': ok('What each manifest did', 'ApplyResult'), '415': errorResponse('Unsupported Content-Type'), ...mutationErrors },
        },
      },
      '/api/v1/hosts/{name}/actions/{action}': {
        parameters: [nameParam, { name: 'action', in: 'path', required: true, schema: { type: 'string', enum: ['power-on', 'power-off', 'reboot', 'inspect', 'detach', 'attach'] } }],
        post: {
          operationId: 'hostAction', summary: 'Power on/off, reboot (mode hard|soft, default soft), inspect, detach, attach', security: [{ bearer: [] }],
          requestBody: { required: false, content: json({ oneOf: [ref('RebootAction'), ref('DetachAction'), { type: 'object', maxProperties: 0 }] }) },
          responses: { '202': ok('Action recorded on the host', 'BareMetalHost'), ...mutationErrors },
        },
      },
      '/api/v1/hosts/{name}/firmware': {
        parameters: [nameParam],
        get: {
          operationId: 'getHostFirmware',
          summary: "The host's HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy and FirmwareSchema (null where none)",
          description: 'One read for the per-host firmware objects (each is named after the host, so the host name addresses them all): ' +
            'status settings and components as last read from the BMC, conditions ChangeDetected/Valid, the servicing policy.',
          responses: { '200': ok('Firmware objects', 'HostFirmware'), ...readErrors },
        },
      },
      '/api/v1/hosts/{name}/enroll': {
        parameters: [nameParam],
        post: {
          operationId: 'enrollHost',
          summary: 'Give a host without a BMC its BMC: the one discovery proposed (empty body), or {bmcAddress, username, password} (docs/discovery.md); the host then registers',
          security: [{ bearer: [] }],
          requestBody: {
            required: false,
            content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { bmcAddress: { type: 'string' }, username: { type: 'string' }, password: { type: 'string', writeOnly: true } } } } },
          },
          responses: { '202': ok('The host, enrolled', 'BareMetalHost'), ...mutationErrors },
        },
      },
      '/api/v1/hosts/{name}/events': {
        parameters: [nameParam, ...eventQuery],
        get: { operationId: 'listHostEvents', summary: "One host's events, oldest first", responses: { '200': ok('Events', 'EventList'), ...readErrors } },
      },
      '/api/v1/secrets': {
        get: { operationId: 'listSecrets', summary: 'List secrets (key names only, never values)', responses: { '200': ok('Secrets', 'SecretList'), '500': errorRef('Internal') } },
      },
      '/api/v1/secrets/{namespace}/{name}': {
        parameters: [
          { name: 'namespace', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
        ],
        delete: { operationId: 'deleteSecret', summary: 'Delete a secret', security: [{ bearer: [] }], responses: { '204': { description: 'Deleted' }, ...mutationErrors } },
      },
      '/api/v1/bmc/probe': {
        post: {
          operationId: 'probeBmc',
          summary: 'Probe a BMC (Redfish over HTTPS then HTTP, IPMI lanplus) within 10 s and recommend a metal3 address; advice only, nothing is written',
          security: [{ bearer: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/BmcProbeRequest' } } } },
          responses: { '200': ok('The probe report', 'BmcProbeReport'), ...mutationErrors },
        },
      },
      '/api/v1/bmceventsubscriptions': {
        get: { operationId: 'listBMCEventSubscriptions', summary: 'List BMC event subscriptions (metal3 BMCEventSubscription)', responses: { '200': ok('Subscriptions', 'BMCEventSubscriptionList'), '500': errorRef('Internal') } },
      },
      '/api/v1/bmceventsubscriptions/{namespace}/{name}': {
        parameters: [
          { name: 'namespace', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
        ],
        get: { operationId: 'getBMCEventSubscription', summary: 'One BMC event subscription', responses: { '200': ok('Subscription', 'BMCEventSubscription'), ...readErrors } },
        delete: {
          operationId: 'deleteBMCEventSubscription',
          summary: "Start deleting a subscription: it goes once the BMC's subscription is removed",
          security: [{ bearer: [] }],
          responses: { '202': ok('Marked for deletion', 'BMCEventSubscription'), ...mutationErrors },
        },
      },
      '/api/v1/events': {
        parameters: [{ name: 'host', in: 'query', schema: { type: 'string' } }, ...eventQuery],
        get: { operationId: 'listEvents', summary: 'Events (Kubernetes-style and flight recorder), oldest first', responses: { '200': ok('Events', 'EventList'), ...readErrors } },
      },
      '/api/v1/events/stream': {
        parameters: [
          { name: 'host', in: 'query', schema: { type: 'string' } },
          { name: 'mac', in: 'query', schema: { type: 'string' } },
          { name: 'after', in: 'query', schema: { type: 'integer' }, description: 'Replay stored events after this seq first' },
          { name: 'Last-Event-ID', in: 'header', schema: { type: 'string' }, description: 'Resume after this seq (overrides after)' },
        ],
        get: {
          operationId: 'streamEvents', summary: 'Server-Sent Events: `id: <seq>`, `event: event`, `data: <StoredEvent JSON>`',
          responses: { '200': { description: 'An endless event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, '400': errorRef('BadRequest') },
        },
      },
      '/api/v1/erase-records': {
        parameters: [{ name: 'host', in: 'query', schema: { type: 'string' }, description: "Only this host's records (also after the host was deleted)" }],
        get: { operationId: 'listEraseRecords', summary: 'Signed erase records of every disk clean, newest first', responses: { '200': ok('Erase records', 'EraseRecordList'), ...readErrors } },
      },
      '/api/v1/erase-records/signing-key': {
        get: { operationId: 'eraseSigningKey', summary: "The head node's erase record signing key and its allowed_signers line", responses: { '200': ok('Signing key', 'EraseSigningKey') } },
      },
      '/api/v1/erase-records/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^er-[0-9a-f]{16}$' } }],
        get: {
          operationId: 'getEraseRecord', summary: 'One record: its signed text, byte for byte (verify these bytes, not a re-encoding)',
          responses: { '200': ok('The signed record', 'EraseRecord'), ...readErrors },
        },
      },
      '/api/v1/erase-records/{id}/signature': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^er-[0-9a-f]{16}$' } }],
        get: {
          operationId: 'getEraseRecordSignature', summary: 'The SSHSIG signature of the record (namespace rackside-erase-record): ssh-keygen -Y verify checks it',
          responses: { '200': { description: 'Armored SSH signature', content: { 'text/plain': { schema: { type: 'string' } } } }, ...readErrors },
        },
      },
      '/api/v1/version': { get: { operationId: 'version', summary: 'Agent version and identity', responses: { '200': ok('Agent info', 'AgentInfo') } } },
      '/api/v1/healthz': { get: { operationId: 'healthz', summary: 'Liveness', responses: { '200': ok('Alive', 'Health') } } },
      '/api/openapi.json': { get: { operationId: 'openapi', summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1 document', content: json({ type: 'object' }) } } } },
    },
  };
}
