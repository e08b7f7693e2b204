// The environment of the child processes the tests start.

/** The caller's environment, without the coverage collector (only this process's src/ counts), with `extra` on top. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_V8_COVERAGE: _, ...env } = process.env;
  return { ...env, ...extra };
}
