// A log destination that keeps every line, and a mock that logs to one.
import type { ConfigInput } from '../../src/domain/config.js';
import { start, type RunningMock } from '../../src/server/server.js';

/** A pino destination that keeps every line; `records` parses them. */
export interface Captured {
  readonly lines: string[];
  write(s: string): void;
  records(): Record<string, unknown>[];
}

/** A log destination that keeps every line written to it. */
export function capture(): Captured {
  const lines: string[] = [];
  return {
    lines,
    write: (s: string) => void lines.push(...s.split('\n').filter(Boolean)),
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Starts a mock on a free port that logs to a capture, runs fn with both, and always closes the server. */
export async function withLoggedMock(
  config: ConfigInput,
  fn: (mock: RunningMock, out: Captured) => Promise<void>,
): Promise<void> {
  const out = capture();
  const mock = await start({ port: 0, ...config }, { log: out });
  try {
    await fn(mock, out);
  } finally {
    await mock.close();
  }
}
