import { defineConfig } from 'vitest/config';

// The real-client suite (`npm run test:e2e`): real, pinned clients against scripted mocks of their
// model APIs on 127.0.0.1. Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    globalSetup: ['tests/e2e/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    fileParallelism: false,
  },
});
