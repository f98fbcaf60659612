import type { FigureProvenance, FigureSources } from '../../../contract';
import type { Figures, OriginFigures } from './figures';

/** The first origin's figure for each field. */
export function pick(
  key: string,
  origins: OriginFigures[]
): { f: Required<Pick<Figures, 'requests' | 'errors'>> & Figures; figures: FigureSources } | undefined {
  const has = origins.map((o) => o.get(key));
  const rateFrom = has.find((f) => f?.requests !== undefined && f.rate);
  if (!rateFrom) return undefined;
  const errFrom = has.find((f) => f?.errors !== undefined && f.errorsOf) ?? rateFrom;
  const latFrom = has.find((f) => f?.latency && (f.p50Ms != null || f.p99Ms != null)) ?? rateFrom;
  const spans = has.find((f) => f?.spans !== undefined)?.spans ?? 0;
  const node = has.find((f) => f?.node)?.node;
  const latency: FigureProvenance = latFrom.latency ?? {
    origin: rateFrom.rate!.origin,
    exact: false,
    note: 'no latency histogram for this row',
  };
  return {
    f: {
      ...rateFrom,
      requests: rateFrom.requests!,
      errors: errFrom.errors ?? 0,
      p50Ms: latFrom.p50Ms ?? null,
      p99Ms: latFrom.p99Ms ?? null,
      spans,
      node,
    },
    figures: { rate: rateFrom.rate!, errors: errFrom.errorsOf ?? rateFrom.errorsOf!, latency },
  };
}
