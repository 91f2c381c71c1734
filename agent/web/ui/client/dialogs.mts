/**
 * @module Modal dialogs of the status page (native `<dialog>` with `showModal()`: focus moves
 * in, the page behind is inert, Escape cancels, focus returns to the opener): the
 * confirmation dialog every host action goes through, with optional form fields, and the
 * management-token dialog. A refused action (401) stays open with the server's message and a
 * "Set token…" button, so the operator can fix the token and confirm again.
 */
import { ApiFailure, storeToken, storedToken } from './api.mjs';
import { h, toast } from './dom.mjs';

/** A form field of an action dialog. */
export interface FieldSpec {
  name: string;
  label: string;
  /** `password`: a masked input whose value is taken as typed (not trimmed). */
  type: 'text' | 'url' | 'select' | 'password';
  options?: readonly string[];
  required?: boolean;
  placeholder?: string;
  hint?: string;
  value?: string;
}

/** What an action dialog asks and does. */
export interface ActionDialogSpec {
  title: string;
  question: string;
  confirmLabel: string;
  danger?: boolean;
  fields?: readonly FieldSpec[];
  /** Performs the action; a thrown ApiFailure is shown in the dialog. */
  run: (values: Record<string, string>) => Promise<string>;
}

/** Dispatched on `document` after an action succeeded, so the page refetches what it shows. */
export const ACTION_DONE_EVENT = 'rackside:action-done';

let dialogCount = 0;

function field(spec: FieldSpec, id: string): HTMLElement {
  const hintId = `${id}-hint`;
  const common = { id, name: spec.name, ...(spec.required === true ? { required: true } : {}), ...(spec.hint === undefined ? {} : { 'aria-describedby': hintId }) };
  const control = spec.type === 'select'
    ? h('select', common, (spec.options ?? []).map((o) => h('option', { value: o, ...(o === spec.value ? { selected: true } : {}) }, o === '' ? '(auto)' : o)))
    : h('input', { ...common, type: spec.type, autocomplete: 'off', spellcheck: 'false', ...(spec.placeholder === undefined ? {} : { placeholder: spec.placeholder }), ...(spec.value === undefined ? {} : { value: spec.value }) });
  return h('div', { class: 'field' }, h('label', { for: id }, spec.label), control, spec.hint === undefined ? null : h('span', { id: hintId, class: 'muted' }, spec.hint));
}

function showModal(dialog: HTMLDialogElement, opener: Element | null): void {
  document.body.append(dialog);
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
  });
  dialog.showModal();
}

/** Opens the confirmation dialog of a host action. */
export function openActionDialog(spec: ActionDialogSpec): void {
  dialogCount += 1;
  const id = `dialog-${dialogCount}`;
  const opener = document.activeElement;
  const error = h('p', { class: 'dialog-error', role: 'alert' });
  const tokenButton = h('button', { type: 'button', class: 'btn btn-quiet', hidden: true }, 'Set token…');
  const confirm = h('button', { type: 'submit', class: spec.danger === true ? 'btn btn-danger' : 'btn btn-primary' }, spec.confirmLabel);
  const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
  const form = h('form', { method: 'dialog', novalidate: true },
    h('h2', { id: `${id}-title` }, spec.title),
    h('p', { id: `${id}-desc` }, spec.question),
    (spec.fields ?? []).map((f, i) => field(f, `${id}-f${i}`)),
    error,
    h('div', { class: 'dialog-buttons' }, tokenButton, cancel, confirm));
  const dialog = h('dialog', { 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-desc` }, form);
  cancel.addEventListener('click', () => { dialog.close(); });
  tokenButton.addEventListener('click', () => { openTokenDialog(); });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values: Record<string, string> = {};
    for (const control of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) {
      values[control.name] = control.type === 'password' ? control.value : control.value.trim();
      if (control.required && control.value.trim() === '') {
        error.textContent = `${control.labels?.[0]?.textContent ?? control.name} is required.`;
        control.focus();
        return;
      }
    }
    confirm.disabled = true;
    error.textContent = '';
    spec.run(values).then(
      (message) => {
        dialog.close();
        toast(message);
        document.dispatchEvent(new CustomEvent(ACTION_DONE_EVENT));
      },
      (failure: unknown) => {
        confirm.disabled = false;
        error.textContent = failure instanceof Error ? failure.message : String(failure);
        tokenButton.hidden = !(failure instanceof ApiFailure && failure.status === 401);
      },
    );
  });
  showModal(dialog, opener);
}

/** Updates the topbar button to say whether a token is set for this tab. */
export function updateTokenButton(): void {
  const button = document.getElementById('token-button');
  if (button === null) return;
  button.textContent = storedToken() === undefined ? 'Set management token' : 'Management token ✓';
}

/** Opens the dialog that sets or forgets the management token (kept in sessionStorage). */
export function openTokenDialog(): void {
  const opener = document.activeElement;
  const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'token-hint' });
  const forget = h('button', { type: 'button', class: 'btn btn-quiet' }, 'Forget');
  const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
  const form = h('form', { method: 'dialog' },
    h('h2', { id: 'token-title' }, 'Management token'),
    h('div', { class: 'field' },
      h('label', { for: 'token-input' }, 'Token (management.token)'),
      input,
      h('span', { id: 'token-hint', class: 'muted' }, storedToken() === undefined ? 'Kept for this browser tab only, sent as a Bearer token with actions.' : 'A token is set for this tab. Enter a new one to replace it.')),
    h('div', { class: 'dialog-buttons' }, forget, cancel, h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save')));
  const dialog = h('dialog', { 'aria-labelledby': 'token-title' }, form);
  cancel.addEventListener('click', () => { dialog.close(); });
  forget.addEventListener('click', () => {
    storeToken(undefined);
    updateTokenButton();
    dialog.close();
    toast('Management token forgotten');
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value.trim() === '') {
      input.focus();
      return;
    }
    storeToken(input.value.trim());
    updateTokenButton();
    dialog.close();
    toast('Management token set for this tab');
  });
  showModal(dialog, opener);
}
