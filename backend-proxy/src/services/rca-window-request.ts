/**
 * POST /api/rca's body → the engine's input: the incident window's OTLP JSON traces (required), an optional baseline
 * (OTLP JSON) and kernel events, and engine settings on top of the configured ones. Runs in the engine's worker
 * (./rca-worker.ts) with the JSON parsing, so a large upload costs the worker's time, not the event loop's; bad input
 * is a 400 naming the field.
 */
import { formatZodError, RcaWindowRequest, type Span } from '../../../contract';
import { invalid } from '../domain/errors';
import { assertJsonDepth } from '../domain/json-depth';
import { otlpToSpans, OtlpFormatError } from '../otlp/normalize';
import { RcaConfigSchema, type RankWindowInput, type RcaConfigInput } from '../rca';
import { mergeRcaConfig } from './rca-config';

function spansOf(body: unknown, what: string): Span[] {
  try {
    return otlpToSpans(body);
  } catch (err) {
    if (err instanceof OtlpFormatError) throw invalid(`${what}: ${err.message}`);
    throw err;
  }
}

/** The window to rank from the raw JSON body; `configured`: the operator's engine settings. */
export function windowInputOf(raw: Buffer, configured: RcaConfigInput | undefined): RankWindowInput {
  // Nested past MAX_JSON_DEPTH: refused before it is parsed (the code walking it would overflow the stack).
  assertJsonDepth(raw, 'the JSON body');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw invalid(`malformed JSON body: ${(err as Error).message}`);
  }
  const parsed = RcaWindowRequest.safeParse(body);
  if (!parsed.success) throw invalid(formatZodError(parsed.error, { root: 'body' }));
  const b = parsed.data;
  if (b.traces === undefined || b.traces === null)
    throw invalid('body.traces: OTLP JSON traces of the incident window are required');
  const config = b.config === undefined ? undefined : RcaConfigSchema.safeParse(b.config);
  if (config && !config.success) throw invalid(`config: ${formatZodError(config.error)}`);
  const traces = spansOf(b.traces, 'traces');
  if (!traces.length) throw invalid('traces: no spans in the given OTLP JSON');
  const baseline = b.baseline === undefined ? undefined : spansOf(b.baseline, 'baseline');
  return { traces, baseline, kernelEvents: b.kernelEvents, config: mergeRcaConfig(configured, config?.data) };
}
