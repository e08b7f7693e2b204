import { completionLimitParam } from '../contract/completionLimit.js';
import { operation, type Billing } from '../contract/operations.js';
import type { Limits } from '../domain/limits.js';
import type { Cost } from './types.js';

/** No paid work. */
export const zeroCost = (): Cost => ({ tokens: 0, images: 0, videoSeconds: 0, characters: 0 });

/** Adds b into a. */
export function addCost(a: Cost, b: Cost): Cost {
  a.tokens += b.tokens;
  a.images += b.images;
  a.videoSeconds += b.videoSeconds;
  a.characters += b.characters;
  return a;
}

const chars = (v: unknown): number => (typeof v === 'string' ? [...v].length : 0);
const num = (v: unknown, fallback: number): number => (typeof v === 'number' && v > 0 ? v : fallback);

// When a request leaves the amount open, the estimate assumes the provider's usual default: 256 chat
// tokens, one image, the mock's default video length.
const fallback = (unit: Billing['unit'], limits: Limits): number =>
  unit === 'tokens' ? 256 : unit === 'videoSeconds' ? limits.video.defaultDuration : 1;

/**
 * The paid units a successful request costs, as providers bill them (the operation row's billing):
 * chat tokens (max_tokens, or max_completion_tokens), images (n), video seconds (duration) and synthesised characters
 * (text). `limits` (the checked fixtures/limits.json) gives the mock's default for an amount left open.
 */
export function estimateCost(operationId: string, body: unknown, limits: Limits): Cost {
  const b = (body ?? {}) as Record<string, unknown>;
  const cost = zeroCost();
  const billing = operation(operationId).billing;
  if (!billing) return cost;
  // A chat request bounds its tokens by max_completion_tokens when it has it (the newer name), else max_tokens.
  const field = billing.field === 'max_tokens' ? completionLimitParam(b) : billing.field;
  const value = field === undefined ? undefined : b[field];
  cost[billing.unit] = billing.unit === 'characters' ? chars(value) : num(value, fallback(billing.unit, limits));
  return cost;
}

/** True for operations whose success is paid work (every documented operation but the identity call). */
export const isPaid = (operationId: string): boolean => operation(operationId).billing !== undefined;

/** A cost as text: "12 tokens, 3 images, 28 video seconds, 2510 characters" (zero units left out). */
export function formatCost(c: Cost): string {
  const parts = [
    c.tokens && `${c.tokens} chat token${c.tokens === 1 ? '' : 's'}`,
    c.images && `${c.images} image${c.images === 1 ? '' : 's'}`,
    c.videoSeconds && `${c.videoSeconds} video second${c.videoSeconds === 1 ? '' : 's'}`,
    c.characters && `${c.characters} TTS character${c.characters === 1 ? '' : 's'}`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing';
}
