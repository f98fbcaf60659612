/**
 * The panel inspector: what a panel was drawn from — its data frames as a table (with Grafana's CSV download), the
 * queries it sent and the PromQL the proxy ran, and the frames as JSON. Opened from the panel menu through the URL
 * (`?inspect=<panel key>&inspectTab=…`, Grafana's own keys), so an inspected panel is a link and Back closes it.
 * One per page, next to its body.
 */
import { css } from '@emotion/css';
import { dataFrameToJSON, formattedValueToString, toCSV, type DataFrame, type GrafanaTheme2 } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import {
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  VizPanel,
  sceneGraph,
  type SceneComponentProps,
  type SceneObjectState,
  type SceneObjectUrlValues,
} from '@grafana/scenes';
import { Button, Drawer, Select, Tab, TabsBar, useStyles2 } from '@grafana/ui';
import React, { useMemo, useState } from 'react';

import { testIds } from '../testIds';
import { download } from './download';
import { INSPECT_KEYS, INSPECT_TABS, type InspectTab } from './inspectKeys';

interface InspectDrawerState extends SceneObjectState {
  panelKey?: string;
  tab: InspectTab;
}

const MAX_ROWS = 1000;

export class InspectDrawer extends SceneObjectBase<InspectDrawerState> {
  static Component = InspectDrawerRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [INSPECT_KEYS.panel, INSPECT_KEYS.tab] });

  constructor() {
    super({ tab: 'data' });
  }

  getUrlState(): SceneObjectUrlValues {
    return {
      [INSPECT_KEYS.panel]: this.state.panelKey,
      [INSPECT_KEYS.tab]: this.state.panelKey ? this.state.tab : undefined,
    };
  }

  /** Scenes passes only the keys whose value changed: a key absent from `values` keeps its state. */
  updateFromUrl(values: SceneObjectUrlValues): void {
    const patch: Partial<InspectDrawerState> = {};
    if (INSPECT_KEYS.panel in values) {
      const key = values[INSPECT_KEYS.panel];
      patch.panelKey = typeof key === 'string' && key ? key : undefined;
    }
    if (INSPECT_KEYS.tab in values) {
      const tab = values[INSPECT_KEYS.tab];
      patch.tab =
        typeof tab === 'string' && (INSPECT_TABS as readonly string[]).includes(tab) ? (tab as InspectTab) : 'data';
    }
    if (Object.entries(patch).some(([k, v]) => this.state[k as keyof InspectDrawerState] !== v)) {
      this.setState(patch);
    }
  }

  onClose = (): void => {
    locationService.partial({ [INSPECT_KEYS.panel]: null, [INSPECT_KEYS.tab]: null });
  };

  onTab = (tab: InspectTab): void => {
    locationService.partial({ [INSPECT_KEYS.tab]: tab }, true);
  };

  /** The inspected panel: any VizPanel of this page with that key. */
  findPanel(): VizPanel | undefined {
    const { panelKey } = this.state;
    if (!panelKey) {
      return undefined;
    }
    const found = sceneGraph.findObject(this.getRoot(), (o) => o instanceof VizPanel && o.state.key === panelKey);
    return found instanceof VizPanel ? found : undefined;
  }
}

function InspectDrawerRenderer({ model }: SceneComponentProps<InspectDrawer>) {
  const { panelKey, tab } = model.useState();
  const panel = model.findPanel();
  if (!panelKey) {
    return null;
  }
  return (
    <Drawer title={`Inspect: ${panel?.state.title ?? panelKey}`} onClose={model.onClose} size="md" scrollableContent>
      <div data-testid={testIds.inspect.drawer}>
        <TabsBar>
          {INSPECT_TABS.map((t) => (
            <Tab
              key={t}
              label={TAB_LABELS[t]}
              active={tab === t}
              onChangeTab={() => model.onTab(t)}
              data-testid={testIds.inspect.tab(t)}
            />
          ))}
        </TabsBar>
        {panel ? <PanelInspection panel={panel} tab={tab} /> : <p>No panel with the key “{panelKey}” on this page.</p>}
      </div>
    </Drawer>
  );
}

const TAB_LABELS: Record<InspectTab, string> = { data: 'Data', query: 'Query', json: 'DataFrame JSON' };

function PanelInspection({ panel, tab }: { panel: VizPanel; tab: InspectTab }) {
  const styles = useStyles2(getStyles);
  const { data } = sceneGraph.getData(panel).useState();
  // The frames as the panel drew them: field config applied, so values read with their units.
  const frames = useMemo(() => (data ? panel.applyFieldConfig(data).series : []), [panel, data]);
  const [index, setIndex] = useState(0);
  const frame = frames[Math.min(index, Math.max(0, frames.length - 1))];

  if (tab === 'query') {
    const request = data?.request;
    const executed = [...new Set(frames.map((f) => f.meta?.executedQueryString).filter(Boolean))];
    return (
      <div className={styles.body} data-testid={testIds.inspect.query}>
        <h4>Queries</h4>
        <pre className={styles.pre}>{JSON.stringify(request?.targets ?? [], null, 2)}</pre>
        {executed.length > 0 && (
          <>
            <h4>Executed by the proxy</h4>
            <pre className={styles.pre}>{executed.join('\n\n')}</pre>
          </>
        )}
        {(data?.errors ?? []).map((e, i) => (
          <p key={i} className={styles.error}>
            {e.refId ? `${e.refId}: ` : ''}
            {e.message}
          </p>
        ))}
      </div>
    );
  }
  if (tab === 'json') {
    return (
      <pre className={styles.pre} data-testid={testIds.inspect.json}>
        {JSON.stringify(
          frames.map((f) => dataFrameToJSON(f)),
          null,
          2
        )}
      </pre>
    );
  }
  return (
    <div className={styles.body} data-testid={testIds.inspect.data}>
      <div className={styles.toolbar}>
        {frames.length > 1 && (
          <Select
            width={40}
            aria-label="Frame"
            value={index}
            options={frames.map((f, i) => ({ value: i, label: `${f.name ?? f.refId ?? 'frame'} (${f.length} rows)` }))}
            onChange={(v) => setIndex(v.value ?? 0)}
          />
        )}
        {frame && (
          <Button
            variant="secondary"
            size="sm"
            icon="download-alt"
            onClick={() => downloadCsv(frame, panel.state.title)}
          >
            Download CSV
          </Button>
        )}
      </div>
      {frame ? <FrameTable frame={frame} /> : <p>No data.</p>}
    </div>
  );
}

function FrameTable({ frame }: { frame: DataFrame }) {
  const styles = useStyles2(getStyles);
  const rows = Math.min(frame.length, MAX_ROWS);
  const cell = (fi: number, r: number): string => {
    const f = frame.fields[fi];
    const v = f.values[r];
    return f.display
      ? formattedValueToString(f.display(v))
      : v === null || v === undefined
        ? ''
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
  };
  return (
    <div className={styles.scroll}>
      <table className={styles.table} data-testid={testIds.inspect.table}>
        <thead>
          <tr>
            {frame.fields.map((f, i) => (
              <th key={i}>{f.state?.displayName ?? f.config.displayName ?? f.name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {Array.from({ length: rows }, (_, r) => (
            <tr key={r}>
              {frame.fields.map((_, fi) => (
                <td key={fi}>{cell(fi, r)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {frame.length > rows && (
        <p>
          First {rows} of {frame.length} rows (Download CSV has them all).
        </p>
      )}
    </div>
  );
}

function downloadCsv(frame: DataFrame, title: string): void {
  download(`${title.replace(/[^\w.-]+/g, '-')}-data.csv`, toCSV([frame]), 'text/csv;charset=utf-8');
}

const getStyles = (theme: GrafanaTheme2) => ({
  body: css({ paddingTop: theme.spacing(1) }),
  toolbar: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center', margin: theme.spacing(1, 0) }),
  pre: css({
    fontFamily: theme.typography.fontFamilyMonospace,
    fontSize: theme.typography.bodySmall.fontSize,
    whiteSpace: 'pre-wrap',
    marginTop: theme.spacing(1),
  }),
  error: css({ color: theme.colors.error.text }),
  scroll: css({ overflow: 'auto' }),
  table: css({
    width: '100%',
    borderCollapse: 'collapse',
    fontSize: theme.typography.bodySmall.fontSize,
    'th, td': {
      padding: theme.spacing(0.5, 1),
      borderBottom: `1px solid ${theme.colors.border.weak}`,
      textAlign: 'left',
      whiteSpace: 'nowrap',
    },
    th: { color: theme.colors.text.secondary, fontWeight: theme.typography.fontWeightMedium },
  }),
});
