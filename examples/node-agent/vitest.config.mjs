import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/vitest/**/*.test.mjs"],
    // the first tape test starts a regista server (a Python process)
    testTimeout: 60_000,
  },
});
