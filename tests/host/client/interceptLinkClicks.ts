/**
 * Grafana's own link handling: a click on an in-app `<a href>` (a table cell's data link, a heatmap row) is turned
 * into a locationService push instead of a page load, so the app's scenes stay mounted and history gets one step.
 * Modified clicks, `target` links and other origins are left to the browser, as in Grafana.
 */
import { locationService } from '@grafana/runtime';

export function interceptLinkClicks(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
    return;
  }
  const anchor = (e.target as Element | null)?.closest?.('a[href]');
  if (!anchor || anchor.getAttribute('target') || anchor.hasAttribute('download')) {
    return;
  }
  const url = new URL(anchor.getAttribute('href')!, window.location.href);
  if (url.origin !== window.location.origin) {
    return;
  }
  e.preventDefault();
  locationService.push(`${url.pathname}${url.search}${url.hash}`);
}
