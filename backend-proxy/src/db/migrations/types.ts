export interface Migration {
  /** 1, 2, 3…: applied in order, each once. */
  version: number;
  name: string;
  /** Statements run in the migration's transaction (no CREATE INDEX CONCURRENTLY). */
  sql: string;
}
