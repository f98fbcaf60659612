/**
 * "Explain this window": on the Overview and a run's page, a link to the window root cause of the page's time
 * range (`/explain?from&to`, absolute epoch ms, so the link is shareable). Brushing a chart zooms the range; the
 * button then names the brushed window and stands out, so a spike dragged over is one click from its explanation.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { LinkButton, useStyles2 } from '@grafana/ui';
import React from 'react';

import { appLinks } from '../../../contract/app-urls';
import { testIds } from '../../testIds';
import { currentSearch, navigate } from '../shared/AppLink';

interface ExplainWindowState extends SceneObjectState {
  /** The range changed since the page opened (a brush, a zoom, the time picker). */
  brushed?: boolean;
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

export class ExplainWindowButton extends SceneObjectBase<ExplainWindowState> {
  static Component = ExplainWindowRenderer;

  constructor(state: ExplainWindowState = {}) {
    super(state);
    this.addActivationHandler(() => {
      const range = sceneGraph.getTimeRange(this);
      const sub = range.subscribeToState((next, prev) => {
        if (
          next.value.from.valueOf() !== prev.value.from.valueOf() ||
          next.value.to.valueOf() !== prev.value.to.valueOf()
        ) {
          this.setState({ brushed: true });
        }
      });
      return () => sub.unsubscribe();
    });
  }

  /** The Explain page's link for the range shown now (absolute, keeping the carried keys). */
  public href(): string {
    const { from, to } = sceneGraph.getTimeRange(this).state.value;
    return appLinks.explain({ from: from.valueOf(), to: to.valueOf() }, currentSearch());
  }
}

function ExplainWindowRenderer({ model }: SceneComponentProps<ExplainWindowButton>) {
  const { brushed } = model.useState();
  const { value } = sceneGraph.getTimeRange(model).useState();
  const styles = useStyles2(getStyles);
  const href = model.href();
  return (
    <div className={styles.row}>
      <LinkButton
        href={href}
        icon="search-plus"
        size="sm"
        variant={brushed ? 'primary' : 'secondary'}
        data-testid={testIds.explain.button}
        tooltip="The root cause of this range's traces against the hour before: verdict, ranked hops, engine phases, kernel evidence"
        onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
            return;
          }
          e.preventDefault();
          navigate(href);
        }}
      >
        Explain this window
      </LinkButton>
      <span className={styles.muted}>
        {brushed ? 'Brushed: ' : 'Drag over a chart to pick a spike, or explain the whole range: '}
        {clock(value.from.valueOf())} → {clock(value.to.valueOf())} UTC
      </span>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  row: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), flexWrap: 'wrap' }),
  muted: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
});
