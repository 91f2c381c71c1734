/**
 * @module What the lab's BMC changes in an OVMF guest's variable store between power cycles, as
 * a real BMC changes its host's firmware settings: a one-time HTTP boot of a URI (`Boot####` +
 * `BootNext`, Redfish `UefiHttp` + `HttpBootUri`) and Secure Boot on or off (Redfish
 * `SecureBoot.SecureBootEnable`).
 *
 * Secure Boot: edk2's AuthVariableLib decides the `SecureBoot` variable at every start from the
 * `SecureBootEnable` variable (gEfiSecureBootEnableDisableGuid, UINT8, NV+BS): Secure Boot is on
 * when a PK is enrolled (user mode) and `SecureBootEnable` is 1, or absent (it is then created
 * as 1). Writing 0 switches it off at the next start, as OVMF's own setup page
 * (SecureBootConfigDxe) does; the enrolled keys stay.
 * @pure
 */
import { bootOptionName, encodeLoadOption, httpBootDevicePath, uint16Value, type NicLocation } from './efi-load-option.js';
import { EFI_GLOBAL_VARIABLE, EFI_VARIABLE, findVariable, SECURE_BOOT_ENABLE_GUID, setVariable } from './edk2-varstore.js';

/** The boot option number the BMC owns (`Boot0F00`): apart from the ones OVMF creates (Boot0000…). */
export const BMC_BOOT_OPTION = 0x0f00;

const NV_BS_RT = EFI_VARIABLE.NON_VOLATILE | EFI_VARIABLE.BOOTSERVICE_ACCESS | EFI_VARIABLE.RUNTIME_ACCESS;
const NV_BS = EFI_VARIABLE.NON_VOLATILE | EFI_VARIABLE.BOOTSERVICE_ACCESS;

/** `fd` whose next boot is an HTTP boot of `uri` through `nic`: `Boot0F00` (URI device path) and `BootNext = 0x0F00`. */
export function withHttpBootNext(fd: Uint8Array, nic: NicLocation, uri: string): Uint8Array {
  const option = encodeLoadOption(`UEFI HTTP ${uri}`, httpBootDevicePath(nic, uri));
  const withOption = setVariable(fd, { name: bootOptionName(BMC_BOOT_OPTION), guid: EFI_GLOBAL_VARIABLE, attributes: NV_BS_RT, data: option });
  return setVariable(withOption, { name: 'BootNext', guid: EFI_GLOBAL_VARIABLE, attributes: NV_BS_RT, data: uint16Value(BMC_BOOT_OPTION) });
}

/** `fd` without the BMC's boot option and its `BootNext` (a boot without `HttpBootUri`); `fd` itself when neither is there. */
export function withoutHttpBootNext(fd: Uint8Array): Uint8Array {
  let out = fd;
  const next = findVariable(fd, 'BootNext', EFI_GLOBAL_VARIABLE);
  if (next !== undefined && next.data[0] === (BMC_BOOT_OPTION & 0xff) && next.data[1] === BMC_BOOT_OPTION >> 8) {
    out = setVariable(out, { name: 'BootNext', guid: EFI_GLOBAL_VARIABLE, attributes: NV_BS_RT, data: new Uint8Array(0) });
  }
  if (findVariable(out, bootOptionName(BMC_BOOT_OPTION), EFI_GLOBAL_VARIABLE) !== undefined) {
    out = setVariable(out, { name: bootOptionName(BMC_BOOT_OPTION), guid: EFI_GLOBAL_VARIABLE, attributes: NV_BS_RT, data: new Uint8Array(0) });
  }
  return out;
}

/** `fd` with `SecureBootEnable` set to `on` (takes effect at the firmware's next start). */
export function withSecureBootEnable(fd: Uint8Array, on: boolean): Uint8Array {
  return setVariable(fd, { name: 'SecureBootEnable', guid: SECURE_BOOT_ENABLE_GUID, attributes: NV_BS, data: Uint8Array.of(on ? 1 : 0) });
}

/**
 * Whether the firmware will boot with Secure Boot on: a PK enrolled and `SecureBootEnable` 1 or
 * absent (AuthVariableLib's rule, module comment).
 */
export function secureBootAtNextStart(fd: Uint8Array): boolean {
  if (findVariable(fd, 'PK', EFI_GLOBAL_VARIABLE) === undefined) return false;
  const enable = findVariable(fd, 'SecureBootEnable', SECURE_BOOT_ENABLE_GUID);
  return enable === undefined || enable.data[0] === 1;
}
