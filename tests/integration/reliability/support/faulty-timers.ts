/**
 * Preloaded into the proxy CLI (`node --import`) by process-faults.test.ts: once the test sends SIGUSR2 (after the
 * proxy has said it listens, so its guards are in place), a timer callback throws, a promise is rejected with nobody
 * awaiting it, and an interval throws three times, as a bug in one background task would. The proxy must log them and
 * keep serving.
 */
process.once('SIGUSR2', () => {
  setTimeout(() => {
    throw new Error('timer boom (injected)');
  }, 0);
  setTimeout(() => {
    void Promise.reject(new Error('rejected boom (injected)'));
  }, 50);
  let n = 0;
  const t = setInterval(() => {
    if (++n >= 3) clearInterval(t);
    throw new Error(`interval boom ${n} (injected)`);
  }, 100);
});
