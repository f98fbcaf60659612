/**
 * Hopscope's runtime data source: every panel of the app queries the backend proxy through it (the proxy stays the one
 * place that merges Prometheus, Tempo and the exporters). A query names its kind; the kind calls the proxy through
 * the app's API client (schemas of contract/), and returns data frames. A failed query is that panel's error, a failed
 * source a warning on it — never a broken page. Registered once (register.ts), in Grafana and in the test host alike.
 */
import { LoadingState, type DataQueryError, type DataQueryRequest, type DataQueryResponse } from '@grafana/data';
import { RuntimeDataSource } from '@grafana/scenes';

import { OVERVIEW_KINDS } from './kinds';
import type { KindResult, QueryKind } from './kind';
import { HOPSCOPE_DATASOURCE, type HopscopeQuery } from './query';
import { resolveParams } from './variables';

type Kinds = Record<string, QueryKind<unknown> | undefined>;

/** Fetches the kinds of the pages other than the Overview (with those pages' chunk). */
export type OtherKindsLoader = () => Promise<Record<string, QueryKind<never>>>;

export class HopscopeDataSource extends RuntimeDataSource<HopscopeQuery> {
  /** Annotation queries (fault markers) use the same query kinds, through Scenes' AnnotationsDataLayer. */
  override annotations = {};

  constructor(private readonly loadOtherKinds: OtherKindsLoader) {
    super(HOPSCOPE_DATASOURCE.type, HOPSCOPE_DATASOURCE.uid);
  }

  private async kind(name: string): Promise<QueryKind<unknown> | undefined> {
    return (OVERVIEW_KINDS as Kinds)[name] ?? ((await this.loadOtherKinds()) as Kinds)[name];
  }

  async query(request: DataQueryRequest<HopscopeQuery>): Promise<DataQueryResponse> {
    const from = request.range.from.valueOf();
    const to = request.range.to.valueOf();
    const results = await Promise.all(
      request.targets
        .filter((t) => !t.hide)
        .map(async (target): Promise<KindResult> => {
          const { refId, kind, datasource: _ds, hide: _hide, key: _key, queryType: _qt, ...params } = target;
          try {
            const definition = await this.kind(kind);
            if (!definition) {
              return { error: { refId, message: `Unknown query kind "${kind}"` } };
            }
            return await definition.run(resolveParams(params, request.scopedVars), { from, to, refId });
          } catch (err) {
            return { error: { refId, message: err instanceof Error ? err.message : String(err) } };
          }
        })
    );
    const errors: DataQueryError[] = results.flatMap((r) => (r.error ? [r.error] : []));
    return {
      data: results.flatMap((r) => r.frames ?? []),
      errors: errors.length ? errors : undefined,
      state: errors.length ? LoadingState.Error : LoadingState.Done,
    };
  }

  override testDatasource(): Promise<{ status: string; message: string }> {
    return Promise.resolve({ status: 'success', message: 'Hopscope proxy data source (runtime)' });
  }
}
