import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'tests/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // No background drain from the Stop hook while tests run (see tests/helpers/hooks.bash).
    env: { FORGE_REFLECT_CLI: 'off' },
  },
});
