// The webhook sink: dispatcher, delivery log and signing helpers, as the rest of the service uses them.
export { WebhookDispatcher, backoffPolicy, type WebhookDispatcherDeps } from './dispatcher.js';
export {
  listDeliveries,
  redeliver,
  isDeliveryState,
  InvalidCursorError,
  type DeliveryView,
  type DeliveryPage,
  type ListOptions,
  type RedeliverRequest,
} from './log.js';
export { deliveryStates, type DeliveryState } from './queries.js';
export type { MediaResolver } from './media-base64.js';
export { verifyWebhook, signatureHeaders, decodeSecret, type VerifyResult, type SignatureHeaders } from './signing.js';
export { applyJwtKey, signJwtHs256 } from './jwt-header.js';
