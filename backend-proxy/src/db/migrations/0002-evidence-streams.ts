/**
 * Version 2: where the kernel-evidence keeper is in each exporter's stream (so a proxy restart, or another proxy
 * taking over, resumes there), the windows for which evidence is known to be missing (a stream gap, events over the
 * exporter's budget, events the keeper could not queue), and the alert evaluator's last round (so every proxy answers
 * when alerts were last evaluated, and by whom). Never edit an applied migration: add the next version.
 */
import type { Migration } from './types';

export const evidenceStreams: Migration = {
  version: 2,
  name: 'kernel evidence stream positions and gaps, alert evaluator rounds',
  sql: `
-- One row per exporter (its base URL): the last stream position whose events are all in kernel_events.
CREATE TABLE kernel_stream_positions (
  exporter     text PRIMARY KEY,
  node         text,
  last_seq     bigint NOT NULL,
  -- when that position was reached: events missed after it happened after this (epoch ms)
  last_seen_ms double precision NOT NULL,
  -- when evidence from this exporter began to be kept
  first_ms     double precision NOT NULL,
  updated_ms   bigint NOT NULL
);

-- Windows of an exporter for which kernel evidence is missing, and why.
CREATE TABLE kernel_evidence_gaps (
  id          bigserial PRIMARY KEY,
  exporter    text NOT NULL,
  node        text,
  from_ms     double precision NOT NULL,
  to_ms       double precision NOT NULL,
  -- evicted | exporter_restarted | ahead | suppressed | queue_full
  reason      text NOT NULL,
  -- events missed, when known
  missed      bigint,
  recorded_ms bigint NOT NULL
);
CREATE INDEX kernel_evidence_gaps_by_time ON kernel_evidence_gaps (from_ms, to_ms);

-- The alert evaluator's latest round (one row): who evaluated, with which lease token, when, and the sources' status.
CREATE TABLE alert_evaluations (
  id           smallint PRIMARY KEY CHECK (id = 1),
  holder       text NOT NULL,
  token        bigint NOT NULL,
  evaluated_ms bigint NOT NULL,
  sources      jsonb NOT NULL
);
`,
};
