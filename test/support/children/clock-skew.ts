// Imported first by a child process whose clock is to be off (node --import): Date.now() reads
// PITWALL_TEST_CLOCK_SKEW_MS ms ahead of this machine's clock (behind, when negative).
const skewMs = Number(process.env.PITWALL_TEST_CLOCK_SKEW_MS ?? 0);
const now = Date.now.bind(Date);
Date.now = () => now() + skewMs;
