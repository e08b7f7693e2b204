// Jest runs native ES modules (no Babel) when started with node --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['**/*.test.mjs'],
  transform: {},
  // The first chat request loads the tokenizer: on a busy CI machine a test can outlast Jest's 5 s default.
  testTimeout: 30_000,
};
