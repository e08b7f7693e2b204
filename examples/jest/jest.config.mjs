// Jest runs native ES modules (no Babel) when started with node --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['**/*.test.mjs'],
  transform: {},
};
