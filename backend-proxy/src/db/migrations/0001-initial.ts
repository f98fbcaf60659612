/**
 * Version 1: every table of the proxy's state. Times are epoch ms (bigint; kernel event times are fractional ms,
 * double precision); JSON documents are jsonb; the columns the list pages filter or sort on are plain columns.
 * Never edit an applied migration: add the next version.
 */
import type { Migration } from './types';

export const initial: Migration = {
  version: 1,
  name: 'runs, alerts, leases, kernel evidence, saved root-cause answers',
  sql: `
CREATE TABLE runs (
  run_id            text PRIMARY KEY,
  scenario          text NOT NULL,
  status            text NOT NULL CHECK (status IN ('running', 'passed', 'failed', 'aborted')),
  start_ms          bigint NOT NULL,
  end_ms            bigint,
  target            text NOT NULL,
  options           jsonb NOT NULL,
  -- the threshold expressions as registered; verdicts are in result
  thresholds        jsonb NOT NULL DEFAULT '[]',
  -- faults as planned at registration; the applied ones are in result
  faults            jsonb NOT NULL DEFAULT '[]',
  baseline_run_id   text,
  workers           integer NOT NULL DEFAULT 0,
  live_sent         bigint NOT NULL DEFAULT 0,
  live_completed    bigint NOT NULL DEFAULT 0,
  live_errors       bigint NOT NULL DEFAULT 0,
  live_in_flight    bigint NOT NULL DEFAULT 0,
  last_heartbeat_ms bigint NOT NULL,
  -- the merged outcome once every worker is done: summary, merge, verdicts, faults, slowest, failed
  result            jsonb,
  abort_reason      text,
  -- denormalised from result for the list
  duration_s        double precision,
  target_rps        double precision,
  achieved_rps      double precision,
  ttft_p99_ms       double precision,
  e2e_p99_ms        double precision,
  goodput_ratio     double precision,
  errors            bigint,
  error_rate        double precision,
  created_ms        bigint NOT NULL,
  updated_ms        bigint NOT NULL
);
CREATE INDEX runs_by_start ON runs (start_ms DESC, run_id DESC);
CREATE INDEX runs_by_scenario ON runs (scenario, start_ms DESC);

CREATE TABLE run_workers (
  run_id            text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  worker_id         text NOT NULL,
  registration      jsonb NOT NULL,
  -- a retried registration (same payload) is the same registration, not a reused run id
  registration_hash text NOT NULL,
  metrics_url       text,
  status            text NOT NULL CHECK (status IN ('running', 'passed', 'failed', 'aborted')),
  start_ms          bigint NOT NULL,
  joined_ms         bigint NOT NULL,
  last_heartbeat_ms bigint NOT NULL,
  sent              bigint NOT NULL DEFAULT 0,
  completed         bigint NOT NULL DEFAULT 0,
  errors            bigint NOT NULL DEFAULT 0,
  in_flight         bigint NOT NULL DEFAULT 0,
  finish            jsonb,
  finish_hash       text,
  end_ms            bigint,
  abort_reason      text,
  PRIMARY KEY (run_id, worker_id)
);
CREATE INDEX run_workers_running ON run_workers (last_heartbeat_ms) WHERE status = 'running';

-- One rule set, versioned (optimistic concurrency between proxies).
CREATE TABLE alert_rules (
  id         smallint PRIMARY KEY CHECK (id = 1),
  version    bigint NOT NULL,
  rules      jsonb NOT NULL,
  updated_ms bigint NOT NULL,
  updated_by text
);
-- Current state per (rule, pod); pod '' = the rule as a whole.
CREATE TABLE alert_state (
  rule_id    text NOT NULL,
  pod        text NOT NULL DEFAULT '',
  state      text NOT NULL CHECK (state IN ('firing', 'resolved')),
  alert      jsonb NOT NULL,
  since_ms   bigint NOT NULL,
  updated_ms bigint NOT NULL,
  PRIMARY KEY (rule_id, pod)
);
-- Every firing/resolved transition.
CREATE TABLE alert_history (
  id      bigserial PRIMARY KEY,
  rule_id text NOT NULL,
  pod     text NOT NULL DEFAULT '',
  state   text NOT NULL CHECK (state IN ('firing', 'resolved')),
  at_ms   bigint NOT NULL,
  alert   jsonb NOT NULL
);
CREATE INDEX alert_history_by_time ON alert_history (at_ms DESC);
CREATE INDEX alert_history_by_rule ON alert_history (rule_id, at_ms DESC);

-- Named leases (e.g. alerts-evaluator): one holder at a time, by the database's clock.
CREATE TABLE leases (
  name        text PRIMARY KEY,
  holder      text NOT NULL,
  -- +1 each time the lease changes hands: a fencing token
  token       bigint NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- Notable kernel events kept past the exporters' rings.
CREATE TABLE kernel_events (
  id          bigserial PRIMARY KEY,
  -- hash of the event's identity: a re-read stream does not insert twice
  dedupe_key  text NOT NULL UNIQUE,
  ts          double precision NOT NULL,
  type        text NOT NULL,
  pid         integer NOT NULL,
  comm        text NOT NULL,
  pod         text,
  namespace   text,
  node        text,
  duration_ms double precision,
  trace_id    text,
  mode        text NOT NULL CHECK (mode IN ('live', 'replay')),
  detail      jsonb NOT NULL,
  received_ms bigint NOT NULL
);
CREATE INDEX kernel_events_by_pod ON kernel_events (pod, ts);
CREATE INDEX kernel_events_by_trace ON kernel_events (trace_id) WHERE trace_id IS NOT NULL;
CREATE INDEX kernel_events_by_ts ON kernel_events (ts);
CREATE TABLE kernel_evidence_meta (
  id               smallint PRIMARY KEY CHECK (id = 1),
  -- the last retention cut: nothing older than this is kept
  pruned_before_ms double precision NOT NULL
);

-- Root-cause answers saved for a postmortem to link to.
CREATE TABLE rca_answers (
  id         text PRIMARY KEY,
  trace_id   text,
  from_ms    bigint,
  to_ms      bigint,
  title      text,
  answer     jsonb NOT NULL,
  created_ms bigint NOT NULL
);
CREATE INDEX rca_answers_by_trace ON rca_answers (trace_id, created_ms DESC) WHERE trace_id IS NOT NULL;
CREATE INDEX rca_answers_by_created ON rca_answers (created_ms DESC);
`,
};
