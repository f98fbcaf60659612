/**
 * The PNG of the current view, taken in the browser with modern-screenshot (DOM → SVG foreignObject → canvas): it
 * needs nothing but the page itself, so it works inside any Grafana — behind its login, on any URL, with the
 * person's theme and what their panels drew (canvases included). The library is fetched on first use, in a chunk
 * of its own (module.js and the pages' chunks stay as small). The proxy's headless-Chromium PNG remains its own
 * export API (GET /api/export/postmortem?format=png) for scripts, not used here.
 */
import type { GrafanaTheme2 } from '@grafana/data';

import { testIds } from '../../testIds';

/** Marks the export control: left out of the picture (its status line would show "working"). */
export const EXPORT_CONTROL_ATTR = 'data-hopscope-export-control';

/** Biggest side of the canvas, in device pixels: browsers refuse larger canvases (Chromium: 32,767; Safari less). */
const MAX_SIDE = 16_384;

/**
 * The element that holds the whole view around `control`: the smallest ancestor holding the page's body (its
 * container) as well as the control, i.e. the scene with its controls — time range, variables — and its panels.
 */
export function viewRootOf(control: HTMLElement): HTMLElement {
  const page = `[data-testid^="${testIds.page.container('')}"]`;
  for (let el: HTMLElement | null = control; el; el = el.parentElement) {
    if (el.querySelector(page)) {
      return el;
    }
  }
  return document.body;
}

/** The view as a PNG on the theme's canvas colour, at the screen's pixel density (capped to a canvas browsers draw). */
export async function captureView(root: HTMLElement, theme: GrafanaTheme2): Promise<Blob> {
  const { domToBlob } = await import('modern-screenshot');
  const width = root.scrollWidth;
  const height = root.scrollHeight;
  const scale = Math.min(window.devicePixelRatio || 1, MAX_SIDE / Math.max(width, height, 1));
  const blob = await domToBlob(root, {
    type: 'image/png',
    width,
    height,
    scale,
    backgroundColor: theme.colors.background.canvas,
    filter: (node) => !(node instanceof Element && node.hasAttribute(EXPORT_CONTROL_ATTR)),
    // Grafana's fonts are served by Grafana itself (same origin): embedded so the picture renders as the page does.
    timeout: 30_000,
  });
  if (!blob || blob.size === 0) {
    throw new Error('the browser produced an empty image');
  }
  return blob;
}
