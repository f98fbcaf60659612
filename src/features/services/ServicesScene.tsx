/**
 * The drill-down: Services (table: RPS, P99, errors, kernel signals) → a service (its pods and slowest traces) → a pod
 * (kernel evidence as timelines, TLS handshake distribution, the event table whose trace ids open the trace, and the
 * slowest traces). Each level is its own URL (`services/:service/pods/:pod`) that keeps the time range and variables.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { sceneGraph, type SceneComponentProps } from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React, { useMemo } from 'react';

import type { PodKernelEventsAnswer, PodsAnswer, ServicesAnswer, TraceList } from '../../../contract';
import { api, type ApiResult } from '../../api/client';
import { testIds } from '../../testIds';
import { sharedHistograms } from '../../transforms/histogram';
import { describeDetail, kernelLanes, summarizeKernelEvents } from '../../transforms/kernelEvidence';
import { slowestList } from '../../transforms/traces';
import { appLinks } from '../../../contract/app-urls';
import { Histogram } from '../../viz/Histogram';
import { KernelTimeline } from '../../viz/KernelTimeline';
import { AppLink, currentSearch, navigate } from '../shared/AppLink';
import { Breadcrumbs } from '../shared/Breadcrumbs';
import { DataTable } from '../shared/DataTable';
import { fmtMs, fmtNum, fmtTime, kernelCell } from '../shared/format';
import { Panel } from '../shared/Panel';
import { TraceTable } from '../shared/TraceTable';
import { ViewObject, type QueryContext, type ViewState } from '../shared/viewObject';

type KernelByService = Record<string, Record<string, number>>;

/** How many recent traces are scanned for the slowest ones (the proxy lists newest first). */
const TRACE_SCAN = 1000;

async function slowestOf(p: Promise<ApiResult<TraceList>>): Promise<ApiResult<TraceList>> {
  const r = await p;
  return r.ok ? { ok: true, data: slowestList(r.data, 20) } : r;
}

/** Sums each service's pods' kernel-event counts (one request per service, in parallel). */
async function kernelByService(services: string[], w: { from: number; to: number }): Promise<ApiResult<KernelByService>> {
  const answers = await Promise.all(services.map((s) => api.pods(s, w, `hopscope-kernel-by-service-${s}`)));
  const out: KernelByService = {};
  answers.forEach((a, i) => {
    if (!a.ok) {
      return;
    }
    const sum: Record<string, number> = {};
    for (const p of a.data.pods) {
      for (const [k, v] of Object.entries(p.kernelEvents)) {
        sum[k] = (sum[k] ?? 0) + v;
      }
    }
    out[services[i]] = sum;
  });
  const failed = answers.find((a) => !a.ok);
  return failed && !failed.ok && Object.keys(out).length === 0 ? { ok: false, error: failed.error } : { ok: true, data: out };
}

// ---------- Services ----------

export class ServicesListScene extends ViewObject<ViewState> {
  static Component = ServicesListRenderer;

  constructor() {
    super({ sections: {} });
  }

  protected load(ctx: QueryContext): void {
    const w = { from: ctx.from, to: ctx.to };
    const services = api.services(w);
    this.section('services', services);
    this.section(
      'kernel',
      services.then((r) => (r.ok ? kernelByService(r.data.services.map((s) => s.service), w) : { ok: true as const, data: {} }))
    );
  }
}

function ServicesListRenderer({ model }: SceneComponentProps<ServicesListScene>) {
  model.useState();
  const styles = useStyles2(getStyles);
  const services = model.get<ServicesAnswer>('services');
  const kernel = model.get<KernelByService>('kernel');
  const kernelData = kernel.status === 'ok' ? kernel.data : undefined;
  const search = currentSearch();
  return (
    <div className={styles.page} data-testid={testIds.page.container('services')}>
      <Breadcrumbs crumbs={[{ label: 'Services' }]} />
      <Panel id="services" title="Services" section={services} height={services.status === 'ok' ? Math.min(480, 48 + services.data.services.length * 30) : 240} isEmpty={(d) => d.services.length === 0} emptyText="No traced services in this time range.">
        {(d, _w, h) => (
          <DataTable
            testId={testIds.services.table}
            maxHeight={h}
            rows={d.services}
            rowKey={(s) => s.service}
            initialSort={{ id: 'p99', desc: true }}
            columns={[
              {
                id: 'service',
                header: 'Service',
                cell: (s) => (
                  <AppLink href={appLinks.service(s.service, search)} testId={testIds.services.serviceLink(s.service)}>
                    {s.service}
                  </AppLink>
                ),
                sortValue: (s) => s.service,
              },
              { id: 'rps', header: 'RPS', cell: (s) => fmtNum(s.rps, 2), sortValue: (s) => s.rps, align: 'right' },
              { id: 'p50', header: 'P50', cell: (s) => fmtMs(s.p50Ms), sortValue: (s) => s.p50Ms, align: 'right' },
              { id: 'p99', header: 'P99', cell: (s) => fmtMs(s.p99Ms), sortValue: (s) => s.p99Ms, align: 'right' },
              { id: 'errors', header: 'Errors', cell: (s) => `${s.errors} / ${s.spans}`, sortValue: (s) => (s.spans ? s.errors / s.spans : 0), align: 'right' },
              { id: 'pods', header: 'Pods', cell: (s) => s.pods.length, sortValue: (s) => s.pods.length, align: 'right' },
              {
                id: 'kernel',
                header: 'Kernel signals',
                cell: (s) => (kernelData ? kernelCell(kernelData[s.service] ?? {}) : kernel.status === 'error' ? 'unavailable' : '…'),
              },
            ]}
          />
        )}
      </Panel>
    </div>
  );
}

// ---------- A service ----------

export class ServiceScene extends ViewObject<ViewState & { service: string }> {
  static Component = ServiceRenderer;

  constructor(service: string) {
    super({ sections: {}, service });
  }

  protected load(ctx: QueryContext): void {
    const w = { from: ctx.from, to: ctx.to };
    this.section('pods', api.pods(this.state.service, w));
    this.section('traces', slowestOf(api.traces({ ...w, service: this.state.service, limit: TRACE_SCAN, sort: 'duration' }, 'hopscope-service-traces')));
  }

  public exportTraceIds(): string[] {
    const t = this.get<TraceList>('traces');
    return t.status === 'ok' ? t.data.traces.map((x) => x.traceId) : [];
  }
}

function ServiceRenderer({ model }: SceneComponentProps<ServiceScene>) {
  const { service } = model.useState();
  const styles = useStyles2(getStyles);
  const pods = model.get<PodsAnswer>('pods');
  const traces = model.get<TraceList>('traces');
  const search = currentSearch();
  return (
    <div className={styles.page} data-testid={testIds.page.container('service')}>
      <Breadcrumbs crumbs={[{ label: 'Services', href: appLinks.services(search) }, { label: service }]} />
      <Panel id="pods" title={`Pods of ${service}`} section={pods} height={240} isEmpty={(d) => d.pods.length === 0} emptyText="No pods of this service reported spans in this time range.">
        {(d, _w, h) => (
          <DataTable
            maxHeight={h}
            rows={d.pods}
            rowKey={(p) => p.pod}
            initialSort={{ id: 'p99', desc: true }}
            columns={[
              {
                id: 'pod',
                header: 'Pod',
                cell: (p) => (
                  <AppLink href={appLinks.pod(service, p.pod, search)} testId={testIds.services.podLink(p.pod)}>
                    {p.pod}
                  </AppLink>
                ),
                sortValue: (p) => p.pod,
              },
              { id: 'node', header: 'Node', cell: (p) => p.node ?? '—', sortValue: (p) => p.node },
              { id: 'p50', header: 'P50', cell: (p) => fmtMs(p.p50Ms), sortValue: (p) => p.p50Ms, align: 'right' },
              { id: 'p99', header: 'P99', cell: (p) => fmtMs(p.p99Ms), sortValue: (p) => p.p99Ms, align: 'right' },
              { id: 'errors', header: 'Errors', cell: (p) => `${p.errors} / ${p.spans}`, sortValue: (p) => p.errors, align: 'right' },
              { id: 'kernel', header: 'Kernel signals', cell: (p) => kernelCell(p.kernelEvents), sortValue: (p) => Object.values(p.kernelEvents).reduce((a, b) => a + b, 0), align: 'right' },
            ]}
          />
        )}
      </Panel>
      <Panel id="service-traces" title={`Slowest traces through ${service}`} section={traces} height={260} isEmpty={(d) => d.traces.length === 0} emptyText="No traces through this service in this time range.">
        {(d, _w, h) => <TraceTable traces={d.traces} maxHeight={h} testId={testIds.services.slowTraces} />}
      </Panel>
    </div>
  );
}

// ---------- A pod: kernel evidence ----------

export class PodScene extends ViewObject<ViewState & { service: string; pod: string }> {
  static Component = PodRenderer;

  constructor(service: string, pod: string) {
    super({ sections: {}, service, pod });
  }

  protected load(ctx: QueryContext): void {
    const w = { from: ctx.from, to: ctx.to };
    this.section('events', api.kernelEvents(this.state.pod, w));
    this.section('traces', slowestOf(api.traces({ ...w, service: this.state.service, limit: TRACE_SCAN, sort: 'duration' }, 'hopscope-pod-traces')));
  }

  public exportTraceIds(): string[] {
    const t = this.get<TraceList>('traces');
    return t.status === 'ok' ? t.data.traces.map((x) => x.traceId) : [];
  }
}

function PodRenderer({ model }: SceneComponentProps<PodScene>) {
  const { service, pod } = model.useState();
  const styles = useStyles2(getStyles);
  const events = model.get<PodKernelEventsAnswer>('events');
  const traces = model.get<TraceList>('traces');
  const range = sceneGraph.getTimeRange(model).useState().value;
  const evData = events.status === 'ok' ? events.data : undefined;
  const lanes = useMemo(() => (evData ? kernelLanes(evData.events) : []), [evData]);
  const summary = useMemo(() => (evData ? summarizeKernelEvents(evData.events) : undefined), [evData]);
  const tlsHist = useMemo(
    () => (evData ? sharedHistograms([evData.events.filter((e) => e.type === 'tls_handshake' && e.durationMs !== undefined).map((e) => e.durationMs!)], 24)[0] : undefined),
    [evData]
  );
  const search = currentSearch();
  return (
    <div className={styles.page} data-testid={testIds.page.container('pod')}>
      <Breadcrumbs crumbs={[{ label: 'Services', href: appLinks.services(search) }, { label: service, href: appLinks.service(service, search) }, { label: pod }]} />
      <Panel
        id="kernel-evidence"
        title={`Kernel evidence on ${pod}${summary?.replay ? ' (replayed data)' : ''}`}
        description="From the eBPF exporter on the pod's node: TCP retransmits, connect latency, TLS handshakes, GPU allocation failures."
        section={events}
        height={5 * 25 + 30}
        isEmpty={(d) => d.events.length === 0}
        emptyText="The kernel saw nothing unusual for this pod in this time range (or no exporter covers its node)."
      >
        {(d) => (
          <>
            <div className={styles.note}>
              {summary && `TLS P50 ${fmtMs(summary.tlsP50Ms)}, P99 ${fmtMs(summary.tlsP99Ms)} · connect P99 ${fmtMs(summary.connectP99Ms)} · ${summary.withTrace} events carry a trace id`}
              {d.truncated && ` · truncated (${d.dropped} dropped by the exporter)`}
            </div>
            <KernelTimeline
              lanes={lanes}
              fromMs={range.from.valueOf()}
              toMs={range.to.valueOf()}
              onEventClick={(e) => e.traceId && navigate(appLinks.trace(e.traceId, search))}
            />
          </>
        )}
      </Panel>
      <div className={styles.row}>
        <Panel id="tls-histogram" title="TLS handshake latency" section={events} sourceErrors={false} height={220} isEmpty={() => !tlsHist || tlsHist.total === 0} emptyText="No TLS handshakes seen.">
          {() => tlsHist && <Histogram series={[{ label: 'TLS handshakes', hist: tlsHist }]} normalize={false} height={180} />}
        </Panel>
        <Panel id="kernel-events-table" title="Kernel events" section={events} sourceErrors={false} height={220} isEmpty={(d) => d.events.length === 0}>
          {(d, _w, h) => (
            <DataTable
              testId={testIds.services.kernelEvents}
              maxHeight={h}
              rows={d.events.slice(-500)}
              rowKey={(e) => `${e.ts}-${e.type}-${e.pid}-${describeDetail(e.detail)}`}
              initialSort={{ id: 'ts', desc: true }}
              columns={[
                { id: 'ts', header: 'Time', cell: (e) => fmtTime(e.ts), sortValue: (e) => e.ts },
                { id: 'type', header: 'Signal', cell: (e) => e.type, sortValue: (e) => e.type },
                { id: 'dur', header: 'Duration', cell: (e) => fmtMs(e.durationMs), sortValue: (e) => e.durationMs, align: 'right' },
                { id: 'proc', header: 'Process', cell: (e) => `${e.comm} (${e.pid})` },
                { id: 'detail', header: 'Detail', cell: (e) => describeDetail(e.detail) },
                {
                  id: 'trace',
                  header: 'Trace',
                  cell: (e) =>
                    e.traceId ? (
                      <AppLink href={appLinks.trace(e.traceId, search)} testId={testIds.services.eventTraceLink(e.traceId)}>
                        {e.traceId.slice(0, 12)}…
                      </AppLink>
                    ) : (
                      '—'
                    ),
                },
              ]}
            />
          )}
        </Panel>
      </div>
      <Panel id="pod-traces" title={`Slowest traces through ${service}`} section={traces} height={240} isEmpty={(d) => d.traces.length === 0} emptyText="No traces in this time range.">
        {(d, _w, h) => <TraceTable traces={d.traces} maxHeight={h} testId={testIds.services.slowTraces} />}
      </Panel>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  row: css({ display: 'grid', gridTemplateColumns: 'minmax(300px, 1fr) minmax(400px, 2fr)', gap: theme.spacing(1) }),
  note: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, marginBottom: theme.spacing(0.5) }),
});
