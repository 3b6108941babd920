// The sandbox messenger: the network (and its connectors) other parts of the service use.
export { SandboxNetwork, CODE_PROBLEM, type SandboxNetworkDeps, type LinkResult, type InjectResult } from './network.js';
export type { InstanceLookup, LinkedParty } from './router.js';
export type { InjectInput } from './inject.js';
export type { UploadedMedia } from './media-store.js';
export { QR_LIMIT_REASON } from './connector.js';
