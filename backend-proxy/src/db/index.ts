// The proxy's database: open it once at start, hand it to the services and repositories.
export {
  openDatabase,
  type Database,
  type DatabaseKind,
  type OpenDatabaseOptions,
  type Queryable,
  type QueryResult,
} from './database';
export { DatabaseLockedError, DatabaseSchemaError, DatabaseUnavailableError, isUnavailable } from './errors';
export { MIGRATIONS } from './migrations';
export { dbConfigFromEnv, DB_DEFAULTS, DB_ENV_HELP, parseDuration, type DbConfig } from './config';
export * as runsRepo from './runs-repo';
export * as alertsRepo from './alerts-repo';
export * as kernelEvidenceRepo from './kernel-evidence-repo';
export * as rcaAnswersRepo from './rca-answers-repo';
export * as kernelStreamRepo from './kernel-stream-repo';
export {
  acquireLease,
  currentLease,
  releaseLease,
  LeaseKeeper,
  type LeaseAttempt,
  type LeaseKeeperOptions,
  type LeaseState,
} from './lease';
