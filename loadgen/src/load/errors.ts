/** Bad input from the person running the load generator (flags, scenario, baseline, run id): exit 2, no stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}
