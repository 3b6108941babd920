// The WHATSAPP-BUSINESS integration (Meta WhatsApp Cloud API): its connector, webhook routes and settings.
export { CloudApiConnector, cloudApiConnectorFactory, type CloudApiConnectorDeps } from './connector.js';
export { cloudApiKind } from './kind.js';
export { cloudApiDefaults, deriveVerifyToken, versionSegment, type CloudApiSettings } from './settings.js';
export { signBody } from './signature.js';
export { listLimits } from './interactive-list.js';
