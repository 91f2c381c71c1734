/**
 * @module Remote control over SSH: the embedded SSH server ({@link createSshServer}) that runs
 * rackside CLI subcommands for operators holding a key in authorized_keys, and the outbound
 * reverse tunnel to a central bastion ({@link createTunnel}), and OpenSSH SSHSIG signatures
 * ({@link signSshsig}, {@link verifySshsig}; `ssh-keygen -Y verify` compatible) for erase records.
 * docs/ssh.md is the operator guide.
 */
export { createSshServer } from './ssh-server.js';
export type { HostPort, SshServer, SshServerCounters, SshServerInfo, SshServerOptions } from './ssh-server.js';
export { createTunnel, disabledTunnelStatus } from './tunnel.js';
export type { Tunnel, TunnelForward, TunnelOptions, TunnelState, TunnelStatus } from './tunnel.js';
export { loadOrCreateHostKey, HostKeyError, HOST_KEY_ERROR_CODE } from './host-key.js';
export type { HostKey } from './host-key.js';
export { parseAuthorizedKeys } from './authorized-keys.js';
export type { AuthorizedKey, AuthorizedKeyOptions, AuthorizedKeysProblem, ParsedAuthorizedKeys } from './authorized-keys.js';
export { parseHostKeyPin, fingerprintSha256 } from './key-blob.js';
export { ed25519SigningKeyFromOpenSsh, signSshsig, verifySshsig } from './sshsig.js';
export type { Ed25519SigningKey, SshsigVerification } from './sshsig.js';
export { decodeEd25519PrivateKey } from './openssh-key.js';
export type { DecodedEd25519PrivateKey } from './openssh-key.js';
export { DEFAULT_RATE_LIMIT } from './rate-limit.js';
export type { RateLimitPolicy } from './rate-limit.js';
export { DEFAULT_BACKOFF } from './backoff.js';
export type { BackoffPolicy } from './backoff.js';
export { EXIT_INTERNAL, EXIT_USAGE } from './ssh-session.js';
export { silentLogger } from './types.js';
export type { AuditSink, CommandIo, RunCommand, SshAuditEvent, SshAuditType, SshLogger } from './types.js';
