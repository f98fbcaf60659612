/**
 * How a page builds its panels on the data source: a query runner over Hopscope's runtime data source, a panel's part
 * of a shared runner's answer (Grafana's `filterByRefId`), and the chrome every panel gets — a stable key (inspect
 * links), the panel menu and the notices next to the title. See docs/DEVELOPING.md, "A new page".
 */
import type { PanelData } from '@grafana/data';
import {
  SceneDataTransformer,
  SceneQueryRunner,
  type SceneFlexItem,
  type VizPanel,
  type VizPanelBuilder,
} from '@grafana/scenes';

import { HOPSCOPE_DATASOURCE, type HopscopeQuery } from '../datasource/query';
import { PanelMenu } from './PanelMenu';
import { PanelNotices } from './PanelNotices';

/** A runner for Hopscope queries (`hopscopeQuery(kind, params)`); it re-runs when the time range or a variable they name changes. */
export function hopscopeRunner(...queries: HopscopeQuery[]): SceneQueryRunner {
  return new SceneQueryRunner({ datasource: { ...HOPSCOPE_DATASOURCE }, queries });
}

/**
 * The part of the nearest ancestor's data with this refId (a shared runner's answer, e.g. one golden metric):
 * give it to a panel inside the layout that holds the runner as `$data`.
 */
export function partOf(refId: string): SceneDataTransformer {
  return new SceneDataTransformer({ transformations: [{ id: 'filterByRefId', options: { include: refId } }] });
}

export interface PanelChromeOptions {
  /** Stable key: the panel's id in `?inspect=<key>` links (and its test selector). */
  key: string;
  /** The panel shows a trace: the menu offers Explore on the configured Tempo data source. */
  traceId?: string;
}

/** Builds the panel with the app's chrome: key, menu (Inspect, Explore), notices. */
export function hopscopePanel<O extends {}, F extends {}>(
  builder: VizPanelBuilder<O, F>,
  { key, traceId }: PanelChromeOptions
): VizPanel<O, F> {
  const panel = builder.setMenu(new PanelMenu({ traceId })).build();
  panel.setState({ key, titleItems: [new PanelNotices()] });
  return panel;
}

/**
 * Changes some options of a panel, before or after its plugin has loaded (VizPanel.onOptionsChange applies the
 * plugin's defaults, so it needs the plugin; until then the options are state the plugin's defaults join later).
 */
export function setPanelOptions<O extends object>(panel: VizPanel<O>, patch: Partial<O>): void {
  if (panel.getPlugin()) {
    panel.onOptionsChange(patch);
  } else {
    panel.setState({ options: { ...panel.state.options, ...patch } });
  }
}

/**
 * Sizes a layout item to its answer once it is known (rows of a heatmap, depth of a trace, candidates of a root
 * cause), so a panel is as tall as what it draws; `heightOf` returns undefined to keep the current height.
 */
export function fitToData(
  item: SceneFlexItem,
  runner: SceneQueryRunner,
  heightOf: (data: PanelData) => number | undefined
): SceneFlexItem {
  item.addActivationHandler(() => {
    const apply = (data: PanelData | undefined) => {
      const height = data ? heightOf(data) : undefined;
      if (height !== undefined && item.state.height !== height) {
        item.setState({ height });
      }
    };
    apply(runner.state.data);
    const sub = runner.subscribeToState(({ data }) => apply(data));
    return () => sub.unsubscribe();
  });
  return item;
}
