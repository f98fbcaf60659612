/**
 * What the runs service and the database that stores runs both know (the database must not import the service):
 * the runs list's denormalised columns and the default heartbeat timeout.
 */

/** A load-test worker silent this long is marked aborted (HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS's default). */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 30_000;

/** The denormalised columns of the runs list, read from a (merged) summary (../runs/merge.ts listFigures). */
export interface ListFigures {
  durationS: number | null;
  targetRps: number | null;
  achievedRps: number | null;
  ttftP99Ms: number | null;
  e2eP99Ms: number | null;
  goodputRatio: number | null;
  errors: number | null;
  errorRate: number | null;
}
