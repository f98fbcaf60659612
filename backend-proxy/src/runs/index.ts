export { RunsService, DEFAULT_HEARTBEAT_TIMEOUT_MS, LIMITS as RUNS_LIMITS } from './service';
export type { RunsServiceOptions, RunListQuery, HeartbeatAck, ScrapeTargetGroup } from './service';
export { RunsError, type RunsErrorCode } from './errors';
export { mergeRun, mergeSummaries, listFigures, metricValue, runStatus, MAX_KEPT_REQUESTS } from './merge';
