// The module hook test/run.ts registers: every `import ... from 'uvu'` (the test files', uvu/run's) gets
// test/support/uvu.ts, uvu with hooks that cannot fail unseen; that file's own import gets the package.
import type { ResolveHook } from 'node:module';

const served = new URL('./uvu.ts', import.meta.url).href;

export const resolve: ResolveHook = (specifier, context, next) =>
  // Through the rest of the chain, so that tsx, which compiles the file, resolves it as it does any other.
  next(specifier === 'uvu' && context.parentURL !== served ? served : specifier, context);
