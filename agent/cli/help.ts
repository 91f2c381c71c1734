/**
 * @module The text of `rackside --help`, including the exit codes scripts can rely on
 * (kept in step with docs/cli.md and {@link ExitCode}).
 * @pure
 */

/** Full usage text. */
export const HELP_TEXT = `rackside — on-site bare-metal provisioning agent and its client

Usage:
  rackside agent [--config FILE] [--demo]      run the agent (default config /etc/rackside/rackside.yaml)
  rackside apply -f FILE|-                     create or update BareMetalHost and Secret manifests (multi-document YAML or JSON)
  rackside get hosts [NAME] [--discovered] [--switch NAME] [-o wide|json|yaml|name]
                                               --discovered: hosts discovery recorded that wait for a BMC;
                                               --switch: hosts with a NIC on that LLDP switch
  rackside get host NAME [-o wide|json|yaml|name]
  rackside get secrets [-o json|yaml|name]
  rackside get events [--host NAME] [--watch] [-o json|yaml]
  rackside get erase-records [ID] [--host NAME] [-o json|yaml|name]
  rackside get bmceventsubscriptions [NAME] [-n NS] [-o json|yaml|name]
                                               signed records of every disk clean (docs/erase-records.md)
  rackside describe host NAME                  spec, status, hardware, operation history, recent events
  rackside describe erase-record ID            one erase record: host, disks, read-back, signer
  rackside export erase-record ID [--output DIR]
                                               write ID.json, ID.json.sig and allowed_signers, and print
                                               the ssh-keygen -Y verify command that checks them
  rackside export boot-ca [--format pem|der|edk2] [--output FILE]
                                               the CA firmware enrols to trust boot HTTPS (http.tls: auto;
                                               edk2: OVMF's fw_cfg etc/edk2/https/cacerts; docs/https-boot.md)
  rackside delete host NAME [--wait=true|false] [--timeout 5m]
  rackside delete secret NAME [--namespace default]
  rackside delete bmceventsubscription NAME [--namespace default]
  rackside power on|off NAME
  rackside reboot NAME [--hard]                soft reboot unless --hard
  rackside inspect NAME                        re-inspect the hardware
  rackside detach NAME [--force] [--delete-action delay|delete]
  rackside attach NAME
  rackside enroll NAME [--bmc ADDRESS --username USER --password-file FILE]
                                               give a discovered host its BMC: the proposed one, or this one
                                               (docs/discovery.md)
  rackside version                             client and server versions
  rackside images build [--arch amd64|arm64] [--format initrd|iso] [--output DIR] [--config FILE]
                                               build the ramdisk ahead of time (the agent builds it
                                               itself at start; default: where the agent serves it)
  rackside sync status [-o json|yaml]          controller sync: last acknowledgement, backlog, last error
  rackside ssh status [-o json|yaml]           SSH server address and host key, reverse tunnel state
  rackside controller --config FILE            run the fleet controller (PostgreSQL; docs/controller.md)
  rackside controller racks add|rotate|revoke NAME --config FILE
                                               issue (printed once), replace or revoke a rack's push token
  rackside controller racks add|rotate NAME --auth cert --config FILE
                                               the rack authenticates by client certificate (CN = NAME)
  rackside controller racks list --config FILE list racks, whether their credential is active, and its kind
  rackside fleet apply -f FILE|- --rack NAME [--expires 1h]
  rackside fleet power on|off RACK/HOST [--expires 1h]
  rackside fleet reboot|inspect|detach|delete RACK/HOST [--expires 1h]
                                               queue a command at the controller; the rack runs it once
                                               on its next push (--server/RACKSIDE_CONTROLLER, default
                                               http://127.0.0.1:9300; --token is the operator token)
  rackside fleet get racks|hosts [TEXT]|commands [--rack NAME] [-o json|yaml]
  rackside doctor [--config FILE] [-o json] [--timeout 3s]
                                               check this head node: config, interface, ports, other DHCP
                                               servers, boot assets, state dir, clock, controller, BMCs
                                               (exit 1 when a check fails; warnings do not fail)
  rackside install [--destdir DIR]             install or upgrade this build (scripts/install.sh)
  rackside uninstall [--purge] [--destdir DIR] remove it; keeps /etc/rackside and state unless --purge
  rackside migrate [--state-dir DIR]           run store migrations (agent stopped); prints the schema version
  rackside bmc ADDRESS --username USER [--password-file FILE] [--insecure] [-o json|yaml] COMMAND
  rackside bmc probe ADDRESS [--username USER --password-file FILE] [--insecure] [-o json|yaml]
                                               talk to one BMC directly, without the agent (any scheme:
                                               ipmi://, redfish://, idrac-virtualmedia:// …). COMMAND is
                                               power status|on|off|soft|soft-reset|cycle|reset [--wait [--timeout 60s]],
                                               boot pxe|disk|cd|http|bios [--uefi|--legacy] [--persistent], boot status,
                                               info, inventory, vmedia insert URL|eject|status,
                                               bios get [NAME…]|set NAME=VALUE…, firmware list, secureboot on|off|status.
                                               bmc probe: what answers (Redfish, IPMI) and the metal3 address to use.
                                               The password comes from --password-file (- = stdin) or
                                               RACKSIDE_BMC_PASSWORD, never from the command line

Global options:
  --server URL     management API (env RACKSIDE_SERVER, default http://127.0.0.1:8080)
  --token TOKEN    bearer token for changes (env RACKSIDE_TOKEN; the agent requires it when
                   it listens beyond loopback or has management.token set)
  --cacert FILE    CA that signed an https:// server's certificate (env RACKSIDE_CACERT)
  --cert FILE      client certificate for mutual TLS (management.tls.clientCA; env RACKSIDE_CERT)
  --key FILE       its private key (env RACKSIDE_KEY)
  -h, --help       this text

Exit codes:
  0  success
  1  failure: server error (5xx), token refused (401), anything else
  2  usage error, or invalid config file (rackside agent)
  3  not found (404)
  4  conflict (409): stale resourceVersion or immutable field
  5  invalid input (400, 413, 415): the message names the field
  6  cannot reach the agent (connection refused, timeout, stream lost)
  7  timed out waiting (delete --wait, bmc power --wait), or the BMC did not answer in time
  rackside bmc also uses 6 (BMC unreachable) and:
  8  the BMC rejected the username or password
  9  the capability or action is not supported for this scheme or BMC (the message names both)
  10 the BMC's TLS certificate was not accepted (self-signed: add --insecure)
  11 the BMC is busy (HTTP 409/429/503, IPMI node busy): retry later

Errors are printed to stderr as "error: <field>: <message>".
`;
