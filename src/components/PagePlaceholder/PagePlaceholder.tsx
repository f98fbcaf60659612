import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { Icon, useStyles2 } from '@grafana/ui';
import React from 'react';

import { testIds } from '../../testIds';

interface PagePlaceholderState extends SceneObjectState {
  page: string;
  /** What this page will show once it is built, in one or two sentences. */
  description: string;
}

/**
 * Stands in for a page whose issue has not landed yet. It says so plainly, and shows the page's time range so the
 * URL-synced time picker can be seen (and tested) working.
 */
export class PagePlaceholder extends SceneObjectBase<PagePlaceholderState> {
  static Component = PagePlaceholderRenderer;
}

function PagePlaceholderRenderer({ model }: SceneComponentProps<PagePlaceholder>) {
  const { page, description } = model.useState();
  const timeRange = sceneGraph.getTimeRange(model);
  const { value } = timeRange.useState();
  const styles = useStyles2(getStyles);

  return (
    <div className={styles.container} data-testid={testIds.page.placeholder(page)}>
      <Icon name="hourglass" size="xxl" className={styles.icon} />
      <h2 className={styles.title}>This page is not built yet</h2>
      <p className={styles.text}>{description}</p>
      <p className={styles.range}>
        Time range: <code data-testid="data-testid hopscope-placeholder-range">{value.from.toISOString()}</code> to{' '}
        <code>{value.to.toISOString()}</code>
      </p>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  container: css({
    display: 'flex',
    flexDirection: 'column',
    alignItems: 'center',
    textAlign: 'center',
    gap: theme.spacing(1),
    padding: theme.spacing(6, 2),
    background: theme.colors.background.primary,
    border: `1px dashed ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.default,
  }),
  icon: css({
    color: theme.colors.text.secondary,
  }),
  title: css({
    ...theme.typography.h3,
    margin: 0,
  }),
  text: css({
    color: theme.colors.text.secondary,
    maxWidth: theme.spacing(80),
    margin: 0,
  }),
  range: css({
    ...theme.typography.bodySmall,
    color: theme.colors.text.secondary,
    margin: 0,
  }),
});
