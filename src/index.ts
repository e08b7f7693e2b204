// Public surface, by name.

// For test suites
export { startMockServer, type MockServer, type MockServerOptions } from './server/programmatic.js';
export { ConfigError } from './domain/config.js';
export { RuleError, type FaultRule, type RuleView as FaultRuleView } from './domain/faults/rules.js';
export type { FaultSpec } from './domain/faults/spec.js';
export type { RuleMatch } from './domain/faults/match.js';
export type { ReplyRule } from './text/replies.js';
export type { JournalEntry } from './domain/journal/journal.js';
export type {
  Dist,
  DistSummary,
  Profile as LatencyProfile,
  LatencyView,
  LatencyChange,
} from './domain/latency/types.js';
export type { CheckClientOptions } from './server/programmatic.js';
export type { Grade as ClientCheckGrade, Finding as ClientCheckFinding } from './tools/clientCheck/grade.js';
export type { Attempt as ClientCheckAttempt } from './tools/clientCheck/attempts.js';
export type { ClientContext } from './tools/clientCheck/run.js';
export type { Scenario as ClientCheckScenario } from './tools/clientCheck/scenarios.js';

// Mock server
export { createApp, type MockApp, type AppHooks } from './app/createApp.js';
export { start, type RunningMock } from './server/server.js';
export { resolveConfig, defaultConfig, type Config, type ConfigInput, type KeyConfig } from './domain/config.js';
export { operations, pathsOf, type Operation } from './contract/operations.js';
export { ApiError, ERRORS, type ErrorBody } from './contract/errors.js';
export { SchemaRegistry, schemaId } from './contract/schemas.js';

// Types
export type { Reply } from './contract/reply.js';
export type { Handler, HandlerRequest } from './pipeline/handler.js';
export type { Services } from './domain/services.js';
