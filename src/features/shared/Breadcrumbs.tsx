/** The drill-down trail (Services › service › pod › trace), each crumb a link that keeps the time range. */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { testIds } from '../../testIds';
import { AppLink } from './AppLink';

export interface Crumb {
  label: string;
  href?: string;
}

export function Breadcrumbs({ crumbs }: { crumbs: Crumb[] }) {
  const styles = useStyles2(getStyles);
  return (
    <nav aria-label="Drill-down" className={styles.nav} data-testid={testIds.services.breadcrumbs}>
      {crumbs.map((c, i) => (
        <span key={`${c.label}-${i}`} className={styles.crumb}>
          {i > 0 && <span className={styles.sep}>›</span>}
          {c.href && i < crumbs.length - 1 ? <AppLink href={c.href}>{c.label}</AppLink> : <span aria-current="page">{c.label}</span>}
        </span>
      ))}
    </nav>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  nav: css({ display: 'flex', flexWrap: 'wrap', gap: theme.spacing(0.5), marginBottom: theme.spacing(1), fontSize: theme.typography.body.fontSize }),
  crumb: css({ display: 'inline-flex', gap: theme.spacing(0.5) }),
  sep: css({ color: theme.colors.text.disabled }),
});
