/**
 * "Export for postmortem", in the header of every view: asks the proxy for the PNG of this very view (same URL, time
 * range and variables, as absolute times so the picture matches what the user sees) and its Markdown summary, and
 * downloads both. Errors are shown next to the button; the view keeps working.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { Button, useStyles2 } from '@grafana/ui';
import React from 'react';

import { downloadPostmortem } from '../../api/client';
import { testIds } from '../../testIds';
import { exportFileName, exportParams } from '../../transforms/exportParams';
import { traceIdsOnPage } from './traceIds';

interface ExportState extends SceneObjectState {
  status: 'idle' | 'working' | 'done' | 'error';
  message?: string;
}

function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export class ExportButton extends SceneObjectBase<ExportState> {
  static Component = ExportButtonRenderer;

  constructor(state: Partial<ExportState> = {}) {
    super({ status: 'idle', ...state });
  }

  public async run(): Promise<void> {
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
      downloadPostmortem({ ...params, format: 'png' }),
      downloadPostmortem({ ...params, format: 'md' }),
    ]);
    const saved: string[] = [];
    if (png.ok) {
      const name = exportFileName(params.view, range.from.valueOf(), 'png');
      saveBlob(png.data, name);
      saved.push(name);
    }
    if (md.ok) {
      const name = exportFileName(params.view, range.from.valueOf(), 'md');
      saveBlob(md.data, name);
      saved.push(name);
    }
    const errors = [png, md].filter((r) => !r.ok).map((r) => (r.ok ? '' : `${r.error.code}: ${r.error.message}`));
    this.setState(
      errors.length
        ? { status: 'error', message: `${saved.length ? `Saved ${saved.join(', ')}; ` : ''}export failed: ${errors.join('; ')}` }
        : { status: 'done', message: `Saved ${saved.join(' and ')}` }
    );
  }
}

function ExportButtonRenderer({ model }: SceneComponentProps<ExportButton>) {
  const { status, message } = model.useState();
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.wrap}>
      <Button
        icon={status === 'working' ? 'spinner' : 'download-alt'}
        variant="secondary"
        size="md"
        disabled={status === 'working'}
        onClick={() => model.run()}
        tooltip="Download this view as a PNG and a Markdown summary for the postmortem"
        data-testid={testIds.export.button}
      >
        Export for postmortem
      </Button>
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
