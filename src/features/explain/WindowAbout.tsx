/**
 * What a window root cause read, said on its page: the window and its baseline (the hour before), how many traces
 * were analysed out of how many and how they were picked (a sample says so), where the kernel evidence came from,
 * and what the engine could not see.
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
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { rcaAboutOfFrame } from '../../datasource/frames/traces';
import { windowAboutOfFrame } from '../../datasource/frames/windowRca';
import { testIds } from '../../testIds';

interface WindowAboutState extends SceneObjectState {
  /** The `windowRca` runner. */
  data: SceneObjectRef<SceneQueryRunner>;
}

export class WindowAbout extends SceneObjectBase<WindowAboutState> {
  static Component = WindowAboutRenderer;
}

const utc = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

function WindowAboutRenderer({ model }: SceneComponentProps<WindowAbout>) {
  const { data } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const candidates = series?.find((f) => f.meta?.custom?.window);
  const w = windowAboutOfFrame(candidates);
  const about = rcaAboutOfFrame(candidates);
  if (!w || !about) {
    return null;
  }
  const minutes = Math.max(1, Math.round((w.to - w.from) / 60_000));
  return (
    <div className={styles.box} data-testid={testIds.explain.about} aria-label="What the window root cause read">
      <p className={styles.line}>
        <strong>
          {utc(w.from)} → {utc(w.to)}
        </strong>{' '}
        ({minutes} min{w.service ? `, traces through ${w.service}` : ''}) against the hour before it.{' '}
        {w.anomalousTraces} of {w.traces} trace(s) ranked were slower than usual ({w.spans} spans).
      </p>
      <p className={styles.line}>
        <span className={styles.muted}>{w.sample.sampled ? 'Sampled: ' : 'Read: '}</span>
        {w.sample.how}.
      </p>
      {about.kernelEvidenceText && <p className={styles.line}>{about.kernelEvidenceText}</p>}
      {about.missing.length > 0 && (
        <div>
          <span className={styles.muted}>What the engine could not see:</span>
          <ul className={styles.list}>
            {about.missing.map((m, i) => (
              <li key={i}>{m}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({
    padding: theme.spacing(1),
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  line: css({ margin: 0 }),
  muted: css({ color: theme.colors.text.secondary }),
  list: css({ margin: theme.spacing(0.5, 0, 0, 2) }),
});
