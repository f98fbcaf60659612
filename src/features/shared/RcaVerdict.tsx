/**
 * The verdict of a root-cause answer, at the top of its page: one prominent sentence a person can act on (e.g.
 * "llm-vllm-1 saturated: queued 2.8 s (usually 40 ms) behind 37 waiting requests, KV cache 98 %"), read from the
 * answer's candidates frame (`meta.custom.rca.verdict`). No verdict in the answer: nothing is drawn.
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
import { Icon, useStyles2 } from '@grafana/ui';
import React from 'react';

import { rcaAboutOfFrame } from '../../datasource/frames/traces';
import { testIds } from '../../testIds';

interface RcaVerdictState extends SceneObjectState {
  /** A runner of a root-cause kind (`rca` or `windowRca`). */
  data: SceneObjectRef<SceneQueryRunner>;
}

export class RcaVerdict extends SceneObjectBase<RcaVerdictState> {
  static Component = RcaVerdictRenderer;
}

function RcaVerdictRenderer({ model }: SceneComponentProps<RcaVerdict>) {
  const { data } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const verdict = rcaAboutOfFrame(series?.find((f) => f.meta?.custom?.rca))?.verdict;
  if (!verdict) {
    return null;
  }
  return (
    <p className={styles.verdict} data-testid={testIds.traces.verdict} role="status" title={verdict}>
      <Icon name="bolt" size="lg" className={styles.icon} />
      <span className={styles.text}>{verdict}</span>
    </p>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  verdict: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
    margin: 0,
    padding: theme.spacing(1, 1.5),
    borderLeft: `4px solid ${theme.colors.warning.main}`,
    background: theme.colors.background.secondary,
    borderRadius: theme.shape.radius.default,
    ...theme.typography.h4,
    color: theme.colors.text.primary,
  }),
  icon: css({ color: theme.colors.warning.text, flexShrink: 0 }),
  text: css({ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', minWidth: 0 }),
});
