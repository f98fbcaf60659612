/**
 * An in-app link: a real `<a href>` (copy, open in a new tab) whose plain click navigates with Grafana's
 * locationService, so the browser history gets one step per drill-down and back/forward work.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

export function navigate(href: string): void {
  locationService.push(href);
}

/** The current query string (for links that keep the time range and variables). */
export function currentSearch(): string {
  return locationService.getLocation().search;
}

export function AppLink({
  href,
  children,
  testId,
  title,
}: {
  href: string;
  children: React.ReactNode;
  testId?: string;
  title?: string;
}) {
  const styles = useStyles2(getStyles);
  return (
    <a
      href={href}
      className={styles.link}
      data-testid={testId}
      title={title}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
          return;
        }
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  link: css({ color: theme.colors.text.link, '&:hover': { textDecoration: 'underline' } }),
});
