/** What other parts (and users) import from loadgen: the chain, the driver, the adaptive sampler. */
export { startChain, type RunningChain, type StartChainOptions, type HopInfo } from './chain/start';
export { startSplitChain } from './chain/split';
export { loadChainConfig, type ChainConfig } from './config';
export { runLoad, type LoadOptions, type Summary } from './load/driver';
export { AdaptiveSampler, parentBasedAdaptive, type AdaptiveSamplerOptions } from './telemetry/adaptive-sampler';
export { KeepErrorsSpanProcessor } from './telemetry/keep-errors-processor';
export { HOPS, type HopName } from './chain/topology';
