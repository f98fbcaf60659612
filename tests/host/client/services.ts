/**
 * Wires @grafana/runtime's services the way Grafana's app does at boot, with host-sized implementations:
 * HTTP (same-origin), events, echo, template and data-source services, the query runner, plugin import utils,
 * the standard transformers registry and PluginPage (Grafana's page chrome for plugins).
 */
import {
  EventBusSrv,
  LoadingState,
  standardTransformers,
  standardTransformersRegistry,
  toDataFrame,
  type DataQueryRequest,
  type DataQueryResponse,
  type DataSourceApi,
  type DataSourceInstanceSettings,
  type DataSourceRef,
  type PanelData,
  type TransformerRegistryItem,
} from '@grafana/data';
import {
  config,
  FakeEchoSrv,
  setAppEvents,
  setBackendSrv,
  setDataSourceSrv,
  setEchoSrv,
  setPluginImportUtils,
  setRunRequest,
  setTemplateSrv,
  type DataSourceSrv,
  type RuntimeDataSourceRegistration,
  type TemplateSrv,
} from '@grafana/runtime';
// Not a public export of @grafana/runtime 12.4 (Grafana core calls it): the same module instance, by file path.
import { setPluginPage } from 'grafana-runtime-internal/plugin-page';
import { Observable, catchError, concat, defer, from, map, of } from 'rxjs';

import { HostBackendSrv } from './backendSrv';
import { HostPluginPage } from './chrome';
import { getPanelPluginFromCache, importPanelPlugin } from './panels';
import { registerStandardFieldConfigs } from './panels/standardOptions';

/**
 * Data sources registered at runtime (scenes' RuntimeDataSource), and the configured ones Grafana's boot data lists
 * (the host lists those the plugin settings name: instance settings only, they cannot be queried here).
 */
function settingsOf(ds: DataSourceApi): DataSourceInstanceSettings {
  // DataSourceApi keeps its instance settings in a field its type does not declare.
  return (ds as unknown as { instanceSettings: DataSourceInstanceSettings }).instanceSettings;
}

class HostDataSourceSrv implements DataSourceSrv {
  private runtime = new Map<string, DataSourceApi>();

  private uidOf(ref?: DataSourceRef | string | null): string | undefined {
    return typeof ref === 'string' ? ref : (ref?.uid ?? undefined);
  }

  async get(ref?: DataSourceRef | string | null): Promise<DataSourceApi> {
    const uid = this.uidOf(ref);
    const ds = uid ? this.runtime.get(uid) : undefined;
    if (!ds) {
      throw new Error(`Data source ${uid ?? '(default)'} was not found: this host has only runtime data sources`);
    }
    return ds;
  }

  private configured(): DataSourceInstanceSettings[] {
    return Object.values(config.datasources ?? {});
  }

  /** Grafana's filters that the app's variables use: `pluginId` (the data source type) and `metrics`. */
  getList(filters: { pluginId?: string; metrics?: boolean } = {}): DataSourceInstanceSettings[] {
    return [...[...this.runtime.values()].map(settingsOf), ...this.configured()].filter(
      (s) => (!filters.pluginId || s.meta?.id === filters.pluginId) && (!filters.metrics || s.meta?.metrics)
    );
  }

  getInstanceSettings(ref?: DataSourceRef | string | null): DataSourceInstanceSettings | undefined {
    const uid = this.uidOf(ref);
    const ds = uid ? this.runtime.get(uid) : undefined;
    return ds ? settingsOf(ds) : this.configured().find((s) => s.uid === uid || s.name === uid);
  }

  reload(): void {}

  registerRuntimeDataSource({ dataSource }: RuntimeDataSourceRegistration): void {
    if (this.runtime.has(dataSource.uid)) {
      throw new Error(`A runtime data source with uid ${dataSource.uid} has already been registered`);
    }
    this.runtime.set(dataSource.uid, dataSource as unknown as DataSourceApi);
  }
}

/** No dashboard variables exist outside a dashboard; scenes interpolates its own variables before this is reached. */
const templateSrv: TemplateSrv = {
  getVariables: () => [],
  replace: (target?: string) => target ?? '',
  containsTemplate: (target?: string) => Boolean(target && /\$\{?\w|\[\[/.test(target)),
  updateTimeRange: () => undefined,
};

/** Grafana's runRequest, reduced: Loading, then the data source's answer as data frames, or the error. */
function runRequest(
  datasource: DataSourceApi,
  request: DataQueryRequest,
  queryFunction?: typeof datasource.query
): Observable<PanelData> {
  const loading: PanelData = { state: LoadingState.Loading, series: [], timeRange: request.range, request };
  const answer = defer(() => from(queryFunction ? queryFunction(request) : datasource.query(request))).pipe(
    map((res: DataQueryResponse): PanelData => ({
      state: res.state ?? (res.errors?.length || res.error ? LoadingState.Error : LoadingState.Done),
      series: (res.data ?? []).map((d) => toDataFrame(d)),
      errors: res.errors ?? (res.error ? [res.error] : undefined),
      timeRange: request.range,
      request,
    })),
    catchError((err: unknown) =>
      of<PanelData>({
        state: LoadingState.Error,
        series: [],
        errors: [
          { message: err instanceof Error ? err.message : String((err as { message?: string })?.message ?? err) },
        ],
        timeRange: request.range,
        request,
      })
    )
  );
  return concat(of(loading), answer);
}

export function setupRuntimeServices(): void {
  setBackendSrv(new HostBackendSrv());
  setEchoSrv(new FakeEchoSrv());
  setAppEvents(new EventBusSrv());
  setTemplateSrv(templateSrv);
  setDataSourceSrv(new HostDataSourceSrv());
  setRunRequest(runRequest);
  // Core panels: stand-ins built from @grafana/ui (panels/), with Grafana's standard field options behind them.
  registerStandardFieldConfigs();
  setPluginImportUtils({ importPanelPlugin, getPanelPluginFromCache });
  // SceneDataTransformer looks transformers up here; Grafana fills it at boot (ids de-duplicated, first wins).
  standardTransformersRegistry.setInit(() => {
    const seen = new Set<string>();
    const items: TransformerRegistryItem[] = [];
    for (const info of Object.values(standardTransformers)) {
      if (seen.has(info.id)) {
        continue;
      }
      seen.add(info.id);
      items.push({
        id: info.id,
        name: info.name,
        description: info.description,
        transformation: info,
        editor: () => null,
        imageDark: '',
        imageLight: '',
      });
    }
    return items;
  });
  setPluginPage(HostPluginPage);
}
