/** Query parameters of a proxy call: undefined values dropped, the rest as strings (what goes on the query string). */
export type QueryParams = Record<string, string | number | boolean | undefined>;

export function cleanParams(params: QueryParams | undefined): Record<string, string> | undefined {
  if (!params) {
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) {
      out[key] = String(value);
    }
  }
  return out;
}
