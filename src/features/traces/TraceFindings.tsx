/**
 * What one trace says beyond its panels: where its kernel evidence came from and what the engine could not see, broken
 * context propagation (from the span tree and from the engine's evidence), and the selected span's attributes.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObjectRef,
  type SceneObjectState,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Alert, useStyles2 } from '@grafana/ui';
import React, { useMemo } from 'react';

import { podOf, rcaAboutOfFrame, spansOfFrame } from '../../datasource/frames/traces';
import { testIds } from '../../testIds';
import { buildTraceTree } from '../../transforms/traceTree';
import { fmtMs } from '../shared/format';

interface FindingsState extends SceneObjectState {
  /** The trace + root-cause runner (the icicle's). */
  data: SceneObjectRef<SceneQueryRunner>;
  selectedSpanId?: string;
}

export class TraceFindings extends SceneObjectBase<FindingsState> {
  static Component = TraceFindingsRenderer;

  span(spanId: string) {
    const frame = this.state.data
      .resolve()
      .state.data?.series.find((f) => f.meta?.preferredVisualisationType === 'trace');
    return frame ? spansOfFrame(frame).find((s) => s.spanId === spanId) : undefined;
  }
}

function TraceFindingsRenderer({ model }: SceneComponentProps<TraceFindings>) {
  const { data, selectedSpanId } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const spans = useMemo(() => {
    const frame = series?.find((f) => f.meta?.preferredVisualisationType === 'trace');
    return frame ? spansOfFrame(frame) : [];
  }, [series]);
  const broken = useMemo(() => {
    const fromTree = spans.length ? buildTraceTree(spans).broken.map((b) => b.summary) : [];
    const rca = series?.find((f) => f.fields.some((x) => x.name === 'evidenceKinds'));
    const service = rca?.fields.find((x) => x.name === 'service')?.values ?? [];
    const kinds = rca?.fields.find((x) => x.name === 'evidenceKinds')?.values ?? [];
    const text = rca?.fields.find((x) => x.name === 'evidence')?.values ?? [];
    const fromEngine = kinds.flatMap((k: string, i: number) =>
      k.split(',').includes('broken_propagation')
        ? String(text[i])
            .split('\n')
            .filter((l) => l.startsWith('Broken propagation'))
            .map((l) => `${service[i]}: ${l}`)
        : []
    );
    return [...fromTree, ...fromEngine];
  }, [spans, series]);
  const selected = selectedSpanId ? spans.find((s) => s.spanId === selectedSpanId) : undefined;
  const about = rcaAboutOfFrame(series?.find((f) => f.meta?.custom?.rca));
  return (
    <div className={styles.findings}>
      {about && (
        <div className={styles.evidence} aria-label="What the root cause saw">
          {about.kernelEvidenceText && (
            <p
              className={styles.line}
              data-testid={testIds.traces.kernelEvidence}
              data-source={about.kernelEvidence?.source}
            >
              {about.kernelEvidenceText}
            </p>
          )}
          {about.inferredCalls > 0 && (
            <p className={styles.line}>
              {about.inferredCalls} candidate(s) rest on calls inferred from the trace tree: their spans say no kind, so
              a child on another service or pod was taken as the server side.
            </p>
          )}
          {about.missing.length > 0 && (
            <div data-testid={testIds.traces.missing}>
              <span className={styles.muted}>What the engine could not see:</span>
              <ul className={styles.list}>
                {about.missing.map((m, i) => (
                  <li key={i}>{m}</li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
      {broken.length > 0 && (
        <div data-testid={testIds.traces.broken}>
          <Alert severity="warning" title="Broken context propagation">
            <ul>
              {broken.map((b, i) => (
                <li key={i}>{b}</li>
              ))}
            </ul>
          </Alert>
        </div>
      )}
      {selected && (
        <div className={styles.details} data-testid={testIds.viz.icicleSelected}>
          <strong>
            {selected.service} · {selected.name}
          </strong>{' '}
          <span className={styles.muted}>
            {fmtMs(selected.endMs - selected.startMs)} · {selected.kind} · {selected.status}
            {selected.statusMessage ? ` (${selected.statusMessage})` : ''} · pod {podOf(selected) ?? '—'}
          </span>
          <div className={styles.attrs}>
            {Object.entries({ ...selected.resource, ...selected.attributes }).map(([k, v]) => (
              <span key={k}>
                <span className={styles.muted}>{k}</span>={String(v)}
              </span>
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  findings: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  muted: css({ color: theme.colors.text.secondary }),
  details: css({
    padding: theme.spacing(1),
    background: theme.colors.background.secondary,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  attrs: css({
    display: 'flex',
    flexWrap: 'wrap',
    gap: theme.spacing(0.5, 2),
    marginTop: theme.spacing(0.5),
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  evidence: css({
    padding: theme.spacing(1),
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  line: css({ margin: 0 }),
  list: css({ margin: theme.spacing(0.5, 0, 0, 2) }),
});
