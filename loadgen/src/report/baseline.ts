/**
 * `--baseline-run ID|FILE`: the run to compare against, fetched from the proxy (GET /api/runs/:runId, a RunRecord) or
 * read from a file (a RunRecord, or the JSON summary a run wrote with `--json`). Fetched before the run starts, so a
 * wrong baseline costs nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ClientSummary, RunId, RunRecord } from '../../../contract/runs';
import { formatZodError } from '../../../contract/zod-error';
import { UsageError } from '../load/errors';
import { answerMessage, ProxyUnavailable, type ProxyClient } from './proxy-client';

export interface Baseline {
  /** The run id, when known. */
  runId?: string;
  scenario?: string;
  summary: ClientSummary;
  /** Where it came from, for messages. */
  source: string;
  warnings: string[];
}

function fromJson(raw: unknown, source: string): Baseline {
  const obj = raw as Record<string, unknown> | null;
  if (obj && typeof obj === 'object' && 'summary' in obj && 'status' in obj) {
    const r = RunRecord.safeParse(raw);
    if (!r.success) throw new UsageError(`baseline ${source} is not a run record: ${formatZodError(r.error)}`);
    return fromRecord(r.data, source);
  }
  const s = ClientSummary.safeParse(raw);
  if (!s.success)
    throw new UsageError(
      `baseline ${source} is neither a run record nor a hopscope-load JSON summary: ${formatZodError(s.error)}`
    );
  return {
    runId: typeof obj?.runId === 'string' ? obj.runId : undefined,
    scenario: typeof obj?.scenario === 'string' ? obj.scenario : undefined,
    summary: s.data,
    source,
    warnings: [],
  };
}

function fromRecord(rec: RunRecord, source: string): Baseline {
  if (!rec.summary) {
    throw new UsageError(
      `baseline run ${rec.runId} has no client summary yet (status ${rec.status})${rec.status === 'running' ? ': wait until it has finished' : ''}`
    );
  }
  const warnings =
    rec.status === 'aborted'
      ? [
          `baseline run ${rec.runId} was aborted (${rec.abortReason ?? 'no reason given'}): its figures may not be representative`,
        ]
      : [];
  return { runId: rec.runId, scenario: rec.scenario, summary: rec.summary, source, warnings };
}

/** A path to an existing file (or anything that is not a run id) is a file; otherwise a run id on the proxy. */
export async function loadBaseline(ref: string, client: ProxyClient | undefined): Promise<Baseline> {
  if (existsSync(ref) || !RunId.safeParse(ref).success || ref.endsWith('.json')) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(ref, 'utf8'));
    } catch (err) {
      throw new UsageError(
        `cannot read baseline file ${ref}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`
      );
    }
    return fromJson(raw, ref);
  }
  if (!client)
    throw new UsageError(
      `--baseline-run ${ref} is a run id, which needs the proxy (--report none was given): give the baseline's JSON summary file instead`
    );
  let a;
  try {
    a = await client.send('GET', `/api/runs/${encodeURIComponent(ref)}`, undefined, performance.now() + 10_000);
  } catch (err) {
    if (err instanceof ProxyUnavailable) throw new UsageError(`cannot fetch baseline run ${ref}: ${err.message}`);
    throw err;
  }
  if (a.status === 404)
    throw new UsageError(`unknown baseline run ${ref}: the proxy at ${client.baseUrl} has no such run`);
  if (a.status !== 200) throw new UsageError(`cannot fetch baseline run ${ref} (${answerMessage(a)})`);
  const r = RunRecord.safeParse(a.body);
  if (!r.success)
    throw new UsageError(`baseline run ${ref}: the proxy's answer is not a run record: ${formatZodError(r.error)}`);
  return fromRecord(r.data, `run ${ref}`);
}
