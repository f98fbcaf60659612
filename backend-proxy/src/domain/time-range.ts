/** A time range, epoch ms, `from` ≤ `to`: what the routes parse (../http/params.ts) and the services answer for. */
export interface TimeRange {
  from: number;
  to: number;
}
