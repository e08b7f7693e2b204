// Public surface, by name.

// Mock server
export { createApp, type MockApp, type AppHooks } from './app.js';
export { start, type RunningMock } from './server.js';
export { resolveConfig, defaultConfig, type Config, type ConfigInput, type KeyConfig } from './config.js';
export { operations, pathsOf, type Operation } from './operations.js';
export { ApiError, ERRORS, type ErrorBody } from './errors.js';
export { SchemaRegistry, schemaId } from './schemas.js';

// Types
export type { Reply, Handler, HandlerRequest, Services } from './types.js';
