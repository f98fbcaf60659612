/**
 * A panel's notices next to its title (as Grafana's dashboards show them): what a query kind said about its data —
 * a source that could not be reached, a metric a backend lacks, replayed or truncated kernel data, the GPU heatmap's
 * per-GPU note. One icon per severity, the texts in its tooltip (and its accessible name).
 */
import type { QueryResultMetaNotice } from '@grafana/data';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { Icon, PanelChrome, Tooltip } from '@grafana/ui';
import React, { useMemo } from 'react';

import { testIds } from '../testIds';

export class PanelNotices extends SceneObjectBase<SceneObjectState> {
  static Component = PanelNoticesRenderer;

  constructor() {
    super({});
  }
}

const ORDER: Array<QueryResultMetaNotice['severity']> = ['error', 'warning', 'info'];

function PanelNoticesRenderer({ model }: SceneComponentProps<PanelNotices>) {
  // The notices of the data the panel draws (its parent's data, after its transformations).
  const { data } = sceneGraph.getData(model).useState();
  const bySeverity = useMemo(() => {
    const seen = new Set<string>();
    const out = new Map<QueryResultMetaNotice['severity'], string[]>();
    for (const frame of data?.series ?? []) {
      for (const n of frame.meta?.notices ?? []) {
        const key = `${n.severity}:${n.text}`;
        if (!seen.has(key)) {
          seen.add(key);
          out.set(n.severity, [...(out.get(n.severity) ?? []), n.text]);
        }
      }
    }
    return ORDER.flatMap((s) => (out.has(s) ? [{ severity: s, texts: out.get(s)! }] : []));
  }, [data]);
  return (
    <>
      {bySeverity.map(({ severity, texts }) => (
        <Tooltip
          key={severity}
          content={
            <div>
              {texts.map((t) => (
                <div key={t}>{t}</div>
              ))}
            </div>
          }
        >
          <PanelChrome.TitleItem aria-label={texts.join(' · ')} data-testid={testIds.panel.notices(severity)}>
            <Icon name={severity === 'info' ? 'info-circle' : 'exclamation-triangle'} size="sm" />
          </PanelChrome.TitleItem>
        </Tooltip>
      ))}
    </>
  );
}
