/** A bad configuration value, named by its setting; its own module so config.ts and db/config.ts (which config.ts imports) share it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
