/**
 * A minimal Grafana-like chrome around the plugin: top bar with breadcrumbs, the docked nav menu with the plugin's
 * pages (from plugin.json `includes`), and PluginPage (title, subtitle, actions, tabs) as Grafana renders it for
 * app pages. Styling uses theme tokens only, so both themes look like Grafana's.
 */
import { css, cx } from '@emotion/css';
import { PageLayoutType, type GrafanaTheme2, type NavModelItem, type PluginMeta } from '@grafana/data';
import { locationService, type PluginPageProps } from '@grafana/runtime';
import { Icon, IconButton, Tab, TabsBar, useStyles2, useTheme2 } from '@grafana/ui';
import React, { createContext, useContext, useEffect, useState, type MouseEvent, type ReactNode } from 'react';
import { useLocation } from 'react-router';

export interface NavLinkItem {
  text: string;
  url: string;
  icon?: string;
}

/** Host-only: the `theme` query parameter follows the person around, so a reload keeps the chosen theme. */
function withTheme(url: string): string {
  const theme = new URLSearchParams(window.location.search).get('theme');
  return theme ? `${url}${url.includes('?') ? '&' : '?'}theme=${encodeURIComponent(theme)}` : url;
}

function go(event: MouseEvent, url: string): void {
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) {
    return;
  }
  event.preventDefault();
  locationService.push(withTheme(url));
}

/** The nav entries Grafana builds for an app from plugin.json `includes` (pages with addToNav). */
export function navFromMeta(meta: PluginMeta): NavLinkItem[] {
  return (meta.includes ?? [])
    .filter((inc) => inc.type === 'page' && inc.addToNav && inc.path)
    .map((inc) => ({ text: inc.name, url: inc.path!, icon: inc.icon }));
}

/** The breadcrumb trail of the page on screen (PluginPage's pageNav and its parents), shown in the top bar. */
const PageCrumbsContext = createContext<(crumbs: NavLinkItem[] | undefined) => void>(() => undefined);

function crumbsOf(nav: NavModelItem | undefined): NavLinkItem[] {
  const out: NavLinkItem[] = [];
  for (let item = nav; item; item = item.parentItem) {
    if (!item.hideFromBreadcrumbs && item.text) {
      out.unshift({ text: item.text, url: item.url ?? '' });
    }
  }
  return out;
}

/** Page chrome for plugin pages (what Grafana's `setPluginPage` provides), used by SceneAppPage. */
export function HostPluginPage({ pageNav, actions, subTitle, renderTitle, layout, children }: PluginPageProps) {
  const styles = useStyles2(getStyles);
  const title = pageNav?.text;
  const tabs = pageNav?.children ?? [];
  const setCrumbs = useContext(PageCrumbsContext);
  // pageNav is a new object on every render: publish it only when the trail itself changes.
  const trail = JSON.stringify(crumbsOf(pageNav));
  useEffect(() => {
    setCrumbs(JSON.parse(trail));
    return () => setCrumbs(undefined);
  }, [trail, setCrumbs]);
  if (layout === PageLayoutType.Custom) {
    // Grafana renders a Custom layout page without its header: the plugin draws everything.
    return <div className={styles.pageContent}>{children}</div>;
  }
  return (
    <div className={styles.page} data-testid="data-testid host-plugin-page">
      <div className={styles.pageHeader}>
        <div className={styles.titleRow}>
          {renderTitle && title ? renderTitle(title) : <h1 className={styles.title}>{title}</h1>}
          {actions && <div className={styles.actions}>{actions}</div>}
        </div>
        {subTitle && <div className={styles.subTitle}>{subTitle}</div>}
        {tabs.length > 0 && (
          <TabsBar className={styles.tabs}>
            {tabs.map((tab) => (
              <Tab
                key={tab.url ?? tab.text}
                label={tab.text}
                active={tab.active}
                href={tab.url}
                icon={tab.icon as never}
                onChangeTab={(e) => e && go(e as MouseEvent, tab.url ?? '')}
              />
            ))}
          </TabsBar>
        )}
      </div>
      <div className={styles.pageContent}>{children}</div>
    </div>
  );
}

interface ChromeProps {
  appName: string;
  logoUrl: string;
  nav: NavLinkItem[];
  children: ReactNode;
}

export function HostChrome({ appName, logoUrl, nav, children }: ChromeProps) {
  const styles = useStyles2(getStyles);
  const theme = useTheme2();
  const location = useLocation();
  const active = nav
    .filter((n) => location.pathname === n.url || location.pathname.startsWith(`${n.url}/`))
    .sort((a, b) => b.url.length - a.url.length)[0];
  const [pageCrumbs, setPageCrumbs] = useState<NavLinkItem[] | undefined>();
  const crumbs: NavLinkItem[] = [
    { text: 'Home', url: '' },
    { text: 'Apps', url: '' },
  ];
  if (pageCrumbs?.length) {
    // Grafana puts the app itself before the page's own trail.
    if (pageCrumbs[0].text !== appName) {
      crumbs.push({ text: appName, url: nav[0]?.url ?? '' });
    }
    crumbs.push(...pageCrumbs);
  } else {
    crumbs.push({ text: appName, url: nav[0]?.url ?? '' });
    if (active) {
      crumbs.push(active);
    }
  }
  const otherTheme = theme.isDark ? 'light' : 'dark';
  const toggleTheme = () => {
    const url = new URL(window.location.href);
    url.searchParams.set('theme', otherTheme);
    window.location.assign(url.toString());
  };

  return (
    <div className={styles.app}>
      <header className={styles.topBar} data-testid="data-testid host-top-bar">
        <Icon name="grafana" size="lg" className={styles.grafanaLogo} />
        <nav aria-label="Breadcrumbs" className={styles.breadcrumbs}>
          {crumbs.map((c, i) => (
            <React.Fragment key={`${c.url}-${i}`}>
              {i > 0 && <Icon name="angle-right" className={styles.crumbSep} />}
              {i === crumbs.length - 1 ? (
                <span className={styles.crumbCurrent} aria-current="page">
                  {c.text}
                </span>
              ) : c.url ? (
                <a className={styles.crumb} href={c.url} onClick={(e) => go(e, c.url)}>
                  {c.text}
                </a>
              ) : (
                <span className={styles.crumb}>{c.text}</span>
              )}
            </React.Fragment>
          ))}
        </nav>
        <div className={styles.topBarRight}>
          <span className={styles.hostBadge} title="Grafana-compatible test host, not a Grafana server">
            test host
          </span>
          <IconButton name="palette" tooltip={`Switch to the ${otherTheme} theme`} onClick={toggleTheme} />
        </div>
      </header>
      <div className={styles.body}>
        <nav className={styles.menu} aria-label="Main menu" data-testid="data-testid host-nav">
          <div className={styles.menuSection}>
            <Icon name="apps" className={styles.menuSectionIcon} />
            <span>Apps</span>
          </div>
          <div className={styles.menuApp}>
            <img src={logoUrl} alt="" className={styles.menuLogo} />
            <span>{appName}</span>
          </div>
          <ul className={styles.menuList}>
            {nav.map((item) => {
              const isActive = item === active;
              return (
                <li key={item.url}>
                  <a
                    href={item.url}
                    className={cx(styles.menuItem, isActive && styles.menuItemActive)}
                    aria-current={isActive ? 'page' : undefined}
                    data-testid={`data-testid host-nav-${item.text.toLowerCase()}`}
                    onClick={(e) => go(e, item.url)}
                  >
                    {item.text}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <main className={styles.main}>
          <PageCrumbsContext.Provider value={setPageCrumbs}>{children}</PageCrumbsContext.Provider>
        </main>
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  app: css({
    display: 'flex',
    flexDirection: 'column',
    minHeight: '100vh',
    background: theme.colors.background.canvas,
  }),
  topBar: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(2),
    height: theme.spacing(5),
    padding: theme.spacing(0, 2),
    background: theme.colors.background.primary,
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    position: 'sticky',
    top: 0,
    zIndex: theme.zIndex.navbarFixed,
  }),
  grafanaLogo: css({
    color: theme.colors.text.primary,
  }),
  breadcrumbs: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    ...theme.typography.bodySmall,
    flex: 1,
    minWidth: 0,
  }),
  crumb: css({
    color: theme.colors.text.secondary,
    '&:hover': {
      color: theme.colors.text.primary,
      textDecoration: 'underline',
    },
  }),
  crumbSep: css({
    color: theme.colors.text.secondary,
  }),
  crumbCurrent: css({
    color: theme.colors.text.primary,
  }),
  topBarRight: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
  }),
  hostBadge: css({
    ...theme.typography.bodySmall,
    color: theme.colors.text.secondary,
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.pill,
    padding: theme.spacing(0, 1),
  }),
  body: css({
    display: 'flex',
    flex: 1,
    minHeight: 0,
  }),
  menu: css({
    width: theme.spacing(30),
    flexShrink: 0,
    background: theme.colors.background.primary,
    borderRight: `1px solid ${theme.colors.border.weak}`,
    padding: theme.spacing(1, 0),
  }),
  menuSection: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
    padding: theme.spacing(1, 2),
    color: theme.colors.text.secondary,
    ...theme.typography.bodySmall,
  }),
  menuSectionIcon: css({
    color: theme.colors.text.secondary,
  }),
  menuApp: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
    padding: theme.spacing(0.5, 2),
    fontWeight: theme.typography.fontWeightMedium,
  }),
  menuLogo: css({
    width: theme.spacing(2.5),
    height: theme.spacing(2.5),
  }),
  menuList: css({
    listStyle: 'none',
    margin: 0,
    padding: 0,
  }),
  menuItem: css({
    display: 'block',
    position: 'relative',
    padding: theme.spacing(0.75, 2, 0.75, 5),
    color: theme.colors.text.secondary,
    borderRadius: theme.shape.radius.default,
    margin: theme.spacing(0, 1),
    '&:hover': {
      background: theme.colors.action.hover,
      color: theme.colors.text.primary,
    },
  }),
  menuItemActive: css({
    color: theme.colors.text.primary,
    background: theme.colors.action.selected,
    '&::before': {
      content: '""',
      position: 'absolute',
      left: theme.spacing(3.5),
      top: theme.spacing(0.5),
      bottom: theme.spacing(0.5),
      width: theme.spacing(0.5),
      borderRadius: theme.shape.radius.default,
      backgroundImage: theme.colors.gradients.brandVertical,
    },
  }),
  main: css({
    flex: 1,
    minWidth: 0,
    padding: theme.spacing(2, 3),
  }),
  page: css({
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(2),
  }),
  pageHeader: css({
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(1),
  }),
  titleRow: css({
    display: 'flex',
    alignItems: 'center',
    flexWrap: 'wrap',
    gap: theme.spacing(2),
  }),
  title: css({
    ...theme.typography.h2,
    margin: 0,
    flex: 1,
  }),
  actions: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
  }),
  subTitle: css({
    color: theme.colors.text.secondary,
  }),
  tabs: css({
    marginTop: theme.spacing(1),
  }),
  pageContent: css({
    flex: 1,
  }),
});
