import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__tests__/**/*.test.mjs'],
    testTimeout: 30_000,
    // The addon shares one tokio runtime and tokenizer per process; threads keep that cheap.
    pool: 'threads',
  },
})
