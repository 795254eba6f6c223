import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: keep workers low so ORT sessions do not fight each other.
    maxWorkers: 2,
    pool: "forks",
  },
});
