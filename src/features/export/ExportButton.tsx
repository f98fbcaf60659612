/**
 * "Export for postmortem", in the header of every view: a PNG of this very view, taken in the person's own browser
 * (their Grafana session, their theme, the panels as drawn: capture.ts), and the proxy's Markdown summary of it (time
 * range, trace ids, ranked causes, absolute links back), downloaded together — or each on its own (PNG, Markdown).
 * Errors are shown next to the buttons; the view keeps working.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { config, locationService } from '@grafana/runtime';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { Button, ButtonGroup, useStyles2 } from '@grafana/ui';
import React, { useRef } from 'react';

import { downloadPostmortem, type ApiResult } from '../../api/client';
import { testIds } from '../../testIds';
import { download } from '../../scenes/download';
import { exportFileName, exportParams } from '../../transforms/exportParams';
import { EXPORT_CONTROL_ATTR, captureView, viewRootOf } from './capture';
import { traceIdsOnPage } from './traceIds';

export type ExportWhat = 'both' | 'png' | 'md';

interface ExportState extends SceneObjectState {
  status: 'idle' | 'working' | 'done' | 'error';
  message?: string;
}

/** The PNG, taken here: a failed capture is an error result like a failed proxy call. */
async function pngOf(control: HTMLElement): Promise<ApiResult<Blob>> {
  try {
    return { ok: true, data: await captureView(viewRootOf(control), config.theme2) };
  } catch (err) {
    return {
      ok: false,
      error: { kind: 'invalid', code: 'capture_failed', message: err instanceof Error ? err.message : String(err) },
    };
  }
}

export class ExportButton extends SceneObjectBase<ExportState> {
  static Component = ExportButtonRenderer;

  constructor(state: Partial<ExportState> = {}) {
    super({ status: 'idle', ...state });
  }

  /** @param control an element of this export control: the view captured is the page around it. */
  public async run(what: ExportWhat, control: HTMLElement): Promise<void> {
    const range = sceneGraph.getTimeRange(this).state.value;
    const loc = locationService.getLocation();
    const params = exportParams(loc.pathname, loc.search, range.from.valueOf(), range.to.valueOf());
    // Views that list traces (a service, a pod, a search) hand their slowest ones to the Markdown's root-cause section.
    if (!params.traceId) {
      const ids = traceIdsOnPage(this.getRoot());
      if (ids.length) {
        params.traceId = ids.slice(0, 5).join(',');
      }
    }
    this.setState({ status: 'working', message: undefined });
    const [png, md] = await Promise.all([
      what === 'md' ? undefined : pngOf(control),
      what === 'png' ? undefined : downloadPostmortem({ ...params, format: 'md' }),
    ]);
    const saved: string[] = [];
    const errors: string[] = [];
    for (const [result, ext] of [
      [png, 'png'],
      [md, 'md'],
    ] as const) {
      if (!result) {
        continue;
      }
      if (result.ok) {
        const name = exportFileName(params.view, range.from.valueOf(), ext);
        download(name, result.data);
        saved.push(name);
      } else {
        errors.push(`${ext === 'png' ? 'PNG' : 'Markdown'}: ${result.error.code}: ${result.error.message}`);
      }
    }
    this.setState(
      errors.length
        ? {
            status: 'error',
            message: `${saved.length ? `Saved ${saved.join(', ')}; ` : ''}export failed: ${errors.join('; ')}`,
          }
        : { status: 'done', message: `Saved ${saved.join(' and ')}` }
    );
  }
}

function ExportButtonRenderer({ model }: SceneComponentProps<ExportButton>) {
  const { status, message } = model.useState();
  const styles = useStyles2(getStyles);
  const ref = useRef<HTMLDivElement>(null);
  const working = status === 'working';
  const run = (what: ExportWhat) => () => ref.current && model.run(what, ref.current);
  return (
    <div className={styles.wrap} ref={ref} {...{ [EXPORT_CONTROL_ATTR]: '' }}>
      <ButtonGroup>
        <Button
          icon={working ? 'spinner' : 'download-alt'}
          variant="secondary"
          disabled={working}
          onClick={run('both')}
          tooltip="Download this view as a PNG (taken in your browser) and a Markdown summary for the postmortem"
          data-testid={testIds.export.button}
        >
          Export for postmortem
        </Button>
        <Button
          icon="camera"
          variant="secondary"
          disabled={working}
          onClick={run('png')}
          tooltip="This view as a PNG, as you see it"
        >
          PNG
        </Button>
        <Button
          icon="file-alt"
          variant="secondary"
          disabled={working}
          onClick={run('md')}
          tooltip="The Markdown summary: range, traces, ranked causes, links back"
        >
          Markdown
        </Button>
      </ButtonGroup>
      {status === 'done' && (
        <span className={styles.ok} data-testid={testIds.export.done} role="status">
          {message}
        </span>
      )}
      {status === 'error' && (
        <span className={styles.err} data-testid={testIds.export.error} role="alert">
          {message}
        </span>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ display: 'inline-flex', alignItems: 'center', gap: theme.spacing(1) }),
  ok: css({ color: theme.colors.success.text, fontSize: theme.typography.bodySmall.fontSize, maxWidth: 360 }),
  err: css({ color: theme.colors.error.text, fontSize: theme.typography.bodySmall.fontSize, maxWidth: 360 }),
});
