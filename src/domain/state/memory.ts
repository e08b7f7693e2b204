import type { FaultRules, RequestFacts } from '../faults/rules.js';
import type { KeyState } from '../keys.js';
import type { RateLimiter } from '../rateLimits/limiter.js';
import type { Lru } from '../../lib/lru.js';
import type { LimitSnapshot, StateHealth, StateStore, VideoTask } from './store.js';

const HEALTHY: StateHealth = { kind: 'memory', ok: true };

/** The state of one instance, in its own memory: every answer is immediate (the default, and the fastest). */
export class MemoryState implements StateStore {
  readonly kind = 'memory';

  constructor(
    private readonly limiter: RateLimiter,
    private readonly faultRules: FaultRules,
    private readonly videoTasks: Lru<VideoTask>,
  ) {}

  admit(key: KeyState, countsTokens: boolean) {
    return this.limiter.admit(key, countsTokens);
  }
  charge(key: KeyState, tokens: number) {
    return this.limiter.charge(key, tokens);
  }
  limitSnapshot(keys: readonly KeyState[]): LimitSnapshot[] {
    return this.limiter.snapshot(keys);
  }
  resetLimits(_keys: readonly KeyState[]): void {
    this.limiter.reset();
  }

  addRule(input: unknown) {
    return this.faultRules.add(input);
  }
  rules() {
    return this.faultRules.list();
  }
  deleteRule(id: string) {
    return this.faultRules.delete(id);
  }
  clearRules() {
    return this.faultRules.clear();
  }
  resetRules(): void {
    this.faultRules.reset();
  }
  claimFault(req: RequestFacts) {
    return this.faultRules.pick(req);
  }

  putVideo(id: string, task: VideoTask): void {
    this.videoTasks.set(id, task);
  }
  pollVideo(id: string): VideoTask | undefined {
    const task = this.videoTasks.get(id);
    if (task) task.polls++;
    return task;
  }

  health(): StateHealth {
    return HEALTHY;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
