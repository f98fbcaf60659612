/**
 * Preloaded into the proxy CLI (`node --import`) by process-faults.test.ts: once the proxy has started, a timer
 * callback throws, a promise is rejected with nobody awaiting it, and an interval throws three times, as a bug in
 * one background task would. The proxy must log them and keep serving.
 */
const after = Number(process.env.HOPSCOPE_TEST_FAULTS_AFTER_MS ?? 1500);
setTimeout(() => { throw new Error('timer boom (injected)'); }, after);
setTimeout(() => { void Promise.reject(new Error('rejected boom (injected)')); }, after + 100);
let n = 0;
const t = setInterval(() => {
  if (++n >= 3) clearInterval(t);
  throw new Error(`interval boom ${n} (injected)`);
}, after + 200);
