/**
 * @module The Enroll action of a discovered host (docs/discovery.md): the confirmation dialog
 * applies the BMC that in-band enlistment proposed (`POST /api/v1/hosts/:name/enroll` with
 * `{}`), or, for a host without one, asks for a BMC address, user name and password. The
 * password goes only into the request body; the host the agent answers carries none.
 */
import type { BareMetalHost } from '../../../host/types.js';
import { proposedBmc } from '../host-model.js';
import { api } from './api.mjs';
import { openActionDialog } from './dialogs.mjs';

/** Opens the Enroll dialog for `host`. */
export function openEnrollDialog(host: BareMetalHost): void {
  const name = host.metadata.name;
  const proposed = proposedBmc(host);
  if (proposed !== '') {
    openActionDialog({
      title: `Enroll ${name}?`,
      question: `rackside puts the proposed BMC ${proposed} in spec.bmc with the credentials the host made in-band, checks them over the LAN and inspects the host.`,
      confirmLabel: 'Enroll',
      run: async () => {
        await api.enroll(name);
        return `Enrollment of ${name} requested`;
      },
    });
    return;
  }
  openActionDialog({
    title: `Enroll ${name}?`,
    question: 'No BMC was found in-band. Give its address and credentials: rackside stores them as a Secret, checks them over the LAN and inspects the host.',
    confirmLabel: 'Enroll',
    fields: [
      { name: 'bmcAddress', label: 'BMC address', type: 'text', required: true, placeholder: 'ipmi://192.0.2.10 or redfish://…' },
      { name: 'username', label: 'User name', type: 'text', required: true },
      { name: 'password', label: 'Password', type: 'password', required: true },
    ],
    run: async (values) => {
      await api.enroll(name, { bmcAddress: values.bmcAddress ?? '', username: values.username ?? '', password: values.password ?? '' });
      return `Enrollment of ${name} requested`;
    },
  });
}
