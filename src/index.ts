// Public surface, by name.

// For test suites
export { startMockServer, type MockServer, type MockServerOptions } from './programmatic.js';
export { ConfigError } from './config.js';
export { RuleError, type FaultRule, type RuleView as FaultRuleView } from './faults/rules.js';
export type { FaultSpec } from './faults/spec.js';
export type { RuleMatch } from './faults/match.js';
export type { ReplyRule } from './chat/replies.js';
export type { JournalEntry } from './journal.js';

// Mock server
export { createApp, type MockApp, type AppHooks } from './app.js';
export { start, type RunningMock } from './server.js';
export { resolveConfig, defaultConfig, type Config, type ConfigInput, type KeyConfig } from './config.js';
export { operations, pathsOf, type Operation } from './operations.js';
export { ApiError, ERRORS, type ErrorBody } from './errors.js';
export { SchemaRegistry, schemaId } from './schemas.js';

// Types
export type { Reply, Handler, HandlerRequest, Services } from './types.js';
