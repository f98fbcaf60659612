// The HTTP contracts between Hopscope's parts, defined once as zod schemas; TypeScript types are inferred from them.
// The proxy validates with these, the app imports them, the exporter and the chain produce them.
export * from './common';
export * from './kernel-events';
export * from './traces';
export * from './rca';
export * from './faults';
export * from './proxy';
export * from './alert-rules';
export * from './runs';
export * from './capacity';
export * from './capacity-analysis';
export * from './fallback';
export * from './chain';
export * from './zod-error';
export * from './app-urls';
export * from './spans';
export * from './evidence';
export * from './scenario';
export * from './sketch';
export * from './thresholds';
export * from './otel-env';
export * from './engines';
