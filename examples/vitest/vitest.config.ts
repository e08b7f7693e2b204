import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The first chat request loads the tokenizer: on a busy CI machine a test or hook can outlast Vitest's defaults.
  test: { testTimeout: 30_000, hookTimeout: 30_000 },
});
