/**
 * The top of a sweep's or ramp's run page (issue 19): the bottleneck in one sentence (capacitySentence), and offered
 * vs achieved vs goodput per step with the knee marked (a VizPanel over `runCapacity`), and each hop's saturation
 * signals over the run (a VizPanel per hop over `runSaturation`: the signals the verdict used, with the limit it
 * applied as a dashed line; the hops are those the proxy read a signal for). A run without capacity (a
 * constant run) shows nothing: the panel is made only once the record has a capacity, so the page's "drawn" mark does
 * not wait for a panel that is never shown.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObjectState,
  type VizPanel,
} from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { capacitySentence, saturationHops } from '../../datasource/frames/capacity';
import { fetchRunSaturation } from '../../datasource/kinds/runSaturation';
import { hopscopeQuery } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner } from '../../scenes/panels';
import { testIds } from '../../testIds';
import { followRunRecord } from './followRunRecord';

interface RunCapacityState extends SceneObjectState {
  runId: string;
  sentence?: string | null;
  lowerBound?: boolean;
  panel?: VizPanel;
  /** One panel per hop with a saturation signal, made once the hops are known. */
  hopPanels?: VizPanel[];
}

function capacityPanel(runId: string): VizPanel {
  const builder = PanelBuilders.timeseries()
    .setTitle('Offered vs achieved vs goodput per step')
    .setDescription(
      "Each step of the sweep (window of the ramp) as the client counted it: the rate offered, the answers served per second over the step's settled half (achieved) and those that met the SLOs (goodput). The knee, the first step where the chain stopped keeping up, is the red point."
    )
    .setData(hopscopeRunner(hopscopeQuery('runCapacity', { runId }, 'capacity')))
    .setUnit('reqps')
    .setMin(0)
    .setCustomFieldConfig('lineInterpolation', 'stepAfter' as never)
    .setCustomFieldConfig('showPoints', 'always' as never)
    .setCustomFieldConfig('spanNulls', true)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return hopscopePanel(builder, { key: 'run-capacity' });
}

function saturationPanel(runId: string, hop: string): VizPanel {
  const builder = PanelBuilders.timeseries()
    .setTitle(`${hop}: saturation signals`)
    .setDescription(
      `What the capacity analysis read for ${hop} over the run (from Prometheus through the proxy): an LLM hop's engine queue, running sequences and KV cache use; another hop's CPU (share of one core), GPU and network. The dashed line is where the analysis calls the signal saturated.`
    )
    .setData(hopscopeRunner(hopscopeQuery('runSaturation', { runId, service: hop }, 'saturation')))
    .setMin(0)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return hopscopePanel(builder, { key: `run-saturation-${hop}` });
}

export class RunCapacityScene extends SceneObjectBase<RunCapacityState> {
  static Component = RunCapacityRenderer;

  constructor(state: RunCapacityState) {
    super(state);
    followRunRecord(
      this,
      () => this.state.runId,
      (res) => {
        if (!res.ok) {
          return;
        }
        const sentence = capacitySentence(res.data.capacity);
        const hasSteps = (res.data.summary?.steps?.length ?? 0) > 0;
        this.setState({
          sentence,
          lowerBound: res.data.capacity?.lowerBound ?? false,
          panel: sentence !== null && hasSteps ? (this.state.panel ?? capacityPanel(this.state.runId)) : undefined,
        });
        if (sentence !== null && hasSteps && !this.state.hopPanels) {
          this.loadHopPanels();
        }
      }
    );
  }

  private loadHopPanels(): void {
    const runId = this.state.runId;
    void fetchRunSaturation(runId).then((res) => {
      if (!res.ok || this.state.hopPanels || runId !== this.state.runId) {
        return;
      }
      this.setState({ hopPanels: saturationHops(res.data).map((hop) => saturationPanel(runId, hop)) });
    });
  }
}

function RunCapacityRenderer({ model }: SceneComponentProps<RunCapacityScene>) {
  const { sentence, lowerBound, panel, hopPanels } = model.useState();
  const styles = useStyles2(getStyles);
  if (!sentence) {
    return null;
  }
  return (
    <div className={styles.box} data-testid={testIds.runs.capacity}>
      <p className={lowerBound ? `${styles.sentence} ${styles.lower}` : styles.sentence}>{sentence}</p>
      {panel && (
        <div className={styles.panel}>
          <panel.Component model={panel} />
        </div>
      )}
      {hopPanels && hopPanels.length > 0 && (
        <div className={styles.hops} data-testid={testIds.runs.saturation}>
          {hopPanels.map((p) => (
            <div key={p.state.key} className={styles.hop}>
              <p.Component model={p} />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), paddingBottom: theme.spacing(1) }),
  sentence: css({
    margin: 0,
    padding: theme.spacing(1, 1.5),
    borderLeft: `3px solid ${theme.colors.primary.border}`,
    background: theme.colors.background.secondary,
    color: theme.colors.text.primary,
  }),
  lower: css({ borderLeftColor: theme.colors.warning.border }),
  panel: css({ height: 260 }),
  hops: css({ display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(360px, 1fr))', gap: theme.spacing(1) }),
  hop: css({ height: 220 }),
});
