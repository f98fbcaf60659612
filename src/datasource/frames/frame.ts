/**
 * Building blocks of the data frames the data source returns: plain objects in Grafana's DataFrame shape (no runtime
 * import of @grafana/data, so the transforms run and are tested in Node), and the per-source notices a panel shows.
 */
import type {
  DataFrame,
  QueryResultMeta,
  Field,
  FieldConfig,
  FieldType,
  Labels,
  QueryResultMetaNotice,
} from '@grafana/data';

import type { SourceStatus } from '../../../contract';

// FieldType is an enum of @grafana/data: its values as literals, so this module needs no runtime import.
export const TIME = 'time' as FieldType;
export const NUMBER = 'number' as FieldType;
export const STRING = 'string' as FieldType;
export const BOOLEAN = 'boolean' as FieldType;
export const OTHER = 'other' as FieldType;

export function field<T>(
  name: string,
  type: FieldType,
  values: T[],
  config: FieldConfig = {},
  labels?: Labels
): Field<T> {
  return labels ? { name, type, values, config, labels } : { name, type, values, config };
}

/** One table column: its name, its type, its value for a row, and its config (none: `{}`, as `field` gives). */
export type Column<R> = readonly [name: string, type: FieldType, of: (row: R) => unknown, config?: FieldConfig];

/** Table columns over the same rows, in order: each a `field` whose values are `of` of every row. */
export function columns<R>(rows: readonly R[], specs: ReadonlyArray<Column<NoInfer<R>>>): Field[] {
  return specs.map(([name, type, of, config]) => {
    const values = rows.map((row) => of(row));
    return field(name, type, values, config);
  });
}

export function frame(
  fields: Field[],
  options: { name?: string; refId?: string; meta?: QueryResultMeta } = {}
): DataFrame {
  return { ...options, fields, length: fields[0]?.values.length ?? 0 };
}

/** The sources an answer could not reach, as warnings: the panel still draws what the others returned. */
export function sourceNotices(sources: SourceStatus[] | undefined): QueryResultMetaNotice[] {
  return (sources ?? [])
    .filter((s) => !s.ok)
    .map((s) => ({
      severity: 'warning' as const,
      text: `${s.source}: ${s.error ?? 'unavailable'} — showing what the other sources returned`,
    }));
}

/**
 * Attaches notices to the first frame of each part of a result (each refId: every panel that takes one part sees
 * them); an empty frame carries them when there is no data, so the panel says "No data" and why.
 */
export function withNotices(frames: DataFrame[], notices: QueryResultMetaNotice[]): DataFrame[] {
  if (!notices.length) {
    return frames;
  }
  const seen = new Set<string | undefined>();
  return (frames.length ? frames : [frame([])]).map((f) => {
    if (seen.has(f.refId)) {
      return f;
    }
    seen.add(f.refId);
    return { ...f, meta: { ...f.meta, notices: [...(f.meta?.notices ?? []), ...notices] } };
  });
}
