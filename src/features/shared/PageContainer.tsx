/**
 * The body of every page: its panels and controls, under the page's container test id (what the e2e tests wait
 * for to know a page is shown), and a drill-down trail when the page is below another (Services › rag › rag-0…),
 * each crumb a link that keeps the time range and variables.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { SceneObjectBase, type SceneComponentProps, type SceneObject, type SceneObjectState } from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React from 'react';
import { useLocation } from 'react-router-dom';

import { testIds } from '../../testIds';
import { AppLink } from './AppLink';

export interface Crumb {
  label: string;
  /** The crumb's link from the current query string (e.g. `(search) => appLinks.services(search)`). */
  href?: (search: string) => string;
}

interface PageContainerState extends SceneObjectState {
  /** The page's name in its container test id (`data-testid hopscope-page-<name>`). */
  name: string;
  crumbs?: Crumb[];
  body: SceneObject;
}

export class PageContainer extends SceneObjectBase<PageContainerState> {
  static Component = PageContainerRenderer;
}

function PageContainerRenderer({ model }: SceneComponentProps<PageContainer>) {
  const { name, crumbs, body } = model.useState();
  const { search } = useLocation();
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.page} data-testid={testIds.page.container(name)}>
      {crumbs && crumbs.length > 0 && (
        <nav aria-label="Drill-down" className={styles.nav} data-testid={testIds.services.breadcrumbs}>
          {crumbs.map((c, i) => (
            <span key={`${c.label}-${i}`} className={styles.crumb}>
              {i > 0 && <span className={styles.sep}>›</span>}
              {c.href && i < crumbs.length - 1 ? (
                <AppLink href={c.href(search)}>{c.label}</AppLink>
              ) : (
                <span aria-current="page">{c.label}</span>
              )}
            </span>
          ))}
        </nav>
      )}
      <body.Component model={body} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', width: '100%' }),
  nav: css({
    display: 'flex',
    flexWrap: 'wrap',
    gap: theme.spacing(0.5),
    marginBottom: theme.spacing(1),
    fontSize: theme.typography.body.fontSize,
  }),
  crumb: css({ display: 'inline-flex', gap: theme.spacing(0.5) }),
  sep: css({ color: theme.colors.text.disabled }),
});
