/**
 * Page objects for Grafana panels as the app shows them (Grafana's own e2e selectors: `Panel header <title>`,
 * `Panel menu <title>`), their menu items, the inspector, and what the host's stand-in panels draw inside.
 */
import type { Locator, Page } from 'playwright-core';

import { hostPanelIds } from '../../../host/client/panels/testIds';
import { testIds } from '../../../../src/testIds';

export { hostPanelIds };

/** A panel by its title (PanelChrome's `data-testid Panel header <title>`). */
export const panel = (page: Page, title: string): Locator => page.getByTestId(`data-testid Panel header ${title}`);

/** Opens a panel's menu (hovering shows the menu button, as in Grafana) and returns the open menu. */
export async function openPanelMenu(page: Page, title: string): Promise<Locator> {
  await panel(page, title).hover();
  await page.getByTestId(`data-testid Panel menu ${title}`).click();
  const menu = page.getByRole('menu').last();
  await menu.waitFor();
  return menu;
}

/** A menu item by its text (Grafana's `data-testid Panel menu item <text>`). */
export const menuItem = (menu: Locator, text: string): Locator =>
  menu.getByTestId(`data-testid Panel menu item ${text}`);

/** Panel menu → Inspect; resolves with the open inspector drawer. */
export async function inspect(page: Page, title: string): Promise<Locator> {
  const menu = await openPanelMenu(page, title);
  await menuItem(menu, 'Inspect').click();
  const drawer = page.getByTestId(testIds.inspect.drawer);
  await drawer.waitFor();
  // The pointer still rests where the Inspect item was: its submenu (Data, Query, DataFrame JSON…) may open there,
  // over the drawer's tabs. Move it away, as a person's hand does, and let the menu go.
  await page.mouse.move(0, 0);
  await page
    .getByRole('menu')
    .last()
    .waitFor({ state: 'hidden', timeout: 5000 })
    .catch(() => undefined);
  return drawer;
}

/** The inspector's data table as header names and rows of cell texts. */
export async function inspectedTable(page: Page): Promise<{ headers: string[]; rows: string[][] }> {
  const table = page.getByTestId(testIds.inspect.table);
  await table.waitFor();
  const headers = await table.locator('thead th').allInnerTexts();
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  return { headers, rows };
}

/** The notices a panel shows next to its title, by severity (their accessible names). */
export async function notices(page: Page, title: string, severity: 'info' | 'warning' | 'error'): Promise<string> {
  const n = panel(page, title).getByTestId(testIds.panel.notices(severity));
  return (await n.count()) ? ((await n.first().getAttribute('aria-label')) ?? '') : '';
}

/** A table panel's column headers and the cells of the row that holds `link` (a drill-down link, e.g. a service). */
export async function tableRow(page: Page, title: string, link: string): Promise<Record<string, string>> {
  const table = panel(page, title);
  const headers = await table.getByRole('columnheader').allInnerTexts();
  const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: link, exact: true }) });
  const cells = await row.getByRole('cell').allInnerTexts();
  return Object.fromEntries(headers.map((h, i) => [h.replace(/\s+/g, ' ').trim(), (cells[i] ?? '').trim()]));
}

/** Milliseconds from a cell Grafana formatted with the `ms` unit (`950 ms`, `1.52 s`, `2.1 min`). */
export function cellMs(text: string): number {
  const m = /^([\d.]+)\s*(ms|s|min|µs)$/.exec(text.trim());
  if (!m) {
    return NaN;
  }
  return Number(m[1]) * { µs: 0.001, ms: 1, s: 1000, min: 60_000 }[m[2] as 'ms'];
}

/** Every rendered row of a table panel as header → cell text (tables are virtualised: the rows on screen). */
export async function tableRows(page: Page, title: string): Promise<Array<Record<string, string>>> {
  const table = panel(page, title);
  const headers = (await table.getByRole('columnheader').allInnerTexts()).map((h) => h.replace(/\s+/g, ' ').trim());
  const rows = await table
    .getByRole('row')
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('[role="cell"]')].map((c) => (c.textContent ?? '').trim()))
    );
  return rows
    .filter((cells) => cells.length)
    .map((cells) => Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? ''])));
}

/** Waits until a panel has settled: no loading bar on it. */
export async function settled(page: Page, title: string): Promise<void> {
  const p = panel(page, title);
  await p.waitFor();
  await p.locator('[aria-label="Panel loading bar"]').waitFor({ state: 'detached', timeout: 30_000 });
}

/** The Overview's services panel: one bar per service (its P99), each its drill-down link. */
export const SERVICES_PANEL = 'Services — P99, click one to drill down';

/** A service's bar (its accessible name is `<service>: <P99>`). */
export const serviceBar = (page: Page, service: string): Locator =>
  panel(page, SERVICES_PANEL).getByRole('link', {
    name: new RegExp(`^${service.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
  });

/** A service's P99 in ms, read from its bar. */
export async function serviceP99Ms(page: Page, service: string): Promise<number> {
  const label = (await serviceBar(page, service).getAttribute('aria-label')) ?? '';
  return cellMs(label.split(': ')[1] ?? '');
}
