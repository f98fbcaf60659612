/**
 * Saved answers of one trace: save this one (its shareable link, URL key `answer`), the trace's other saved answers,
 * and, when a saved one is shown, a banner saying when it was ranked with a link back to the live root cause.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObjectRef,
  type SceneObjectState,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Alert, Button, ClipboardButton, useStyles2 } from '@grafana/ui';
import React from 'react';

import { appLinks } from '../../../contract/app-urls';
import type { SavedRcaAnswerMeta } from '../../../contract';
import { api } from '../../api/client';
import { rcaAboutOfFrame } from '../../datasource/frames/traces';
import { testIds } from '../../testIds';
import { AppLink, currentSearch } from '../shared/AppLink';

interface SavedAnswersState extends SceneObjectState {
  traceId: string;
  /** The root-cause runner (its candidates' frame says which saved answer is shown). */
  data: SceneObjectRef<SceneQueryRunner>;
  answerId?: string;
  saved?: SavedRcaAnswerMeta[];
  saving?: boolean;
  error?: string;
  /** The answer saved in this visit (its link is shown). */
  justSaved?: string;
}

export class SavedAnswers extends SceneObjectBase<SavedAnswersState> {
  static Component = SavedAnswersRenderer;

  constructor(state: SavedAnswersState) {
    super(state);
    this.addActivationHandler(() => void this.list());
  }

  private async list(): Promise<void> {
    const res = await api.savedRcaOfTrace(this.state.traceId);
    // The database down or an older proxy: the list is left out, saving still says why it fails.
    this.setState({ saved: res.ok ? res.data.answers : undefined });
  }

  public async save(): Promise<void> {
    this.setState({ saving: true, error: undefined });
    const res = await api.saveTraceRca(this.state.traceId);
    if (!res.ok) {
      this.setState({ saving: false, error: `${res.error.message} (${res.error.code})` });
      return;
    }
    this.setState({ saving: false, justSaved: res.data.id });
    await this.list();
  }
}

/** The app link of a saved answer: this trace's page on it, keeping the carried keys (time range, variables). */
const answerHref = (traceId: string, id: string): string => appLinks.trace(traceId, currentSearch(), { answer: id });

const when = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

function SavedAnswersRenderer({ model }: SceneComponentProps<SavedAnswers>) {
  const { traceId, data, answerId, saved, saving, error, justSaved } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const shown = rcaAboutOfFrame(series?.find((f) => f.meta?.custom?.rca))?.savedAnswer;
  const others = (saved ?? []).filter((a) => a.id !== answerId);
  const absolute = (id: string): string => new URL(answerHref(traceId, id), window.location.origin).toString();
  return (
    <div className={styles.findings}>
      {answerId && (
        <div data-testid={testIds.traces.savedBanner}>
          <Alert
            severity="info"
            title={`Saved answer ${answerId}${shown ? `, as ranked on ${when(shown.createdMs)}` : ''}`}
          >
            {shown?.traceId && shown.traceId !== traceId
              ? `It was saved for trace ${shown.traceId}, not this one. `
              : ''}
            The ranking below is the one saved; the engine may rank the trace differently now.{' '}
            <AppLink href={appLinks.trace(traceId, currentSearch())} testId={testIds.traces.liveLink}>
              Open the live root cause
            </AppLink>
          </Alert>
        </div>
      )}
      <div className={styles.saveRow}>
        {!answerId && (
          <Button
            size="sm"
            variant="secondary"
            icon="save"
            onClick={() => model.save()}
            disabled={saving}
            data-testid={testIds.traces.saveAnswer}
          >
            {saving ? 'Saving…' : 'Save this answer'}
          </Button>
        )}
        {justSaved && (
          <span className={styles.line}>
            Saved as{' '}
            <AppLink
              href={answerHref(traceId, justSaved)}
              testId={testIds.traces.savedLink}
              title="A link to this answer as saved, for the postmortem"
            >
              {justSaved}
            </AppLink>{' '}
            <ClipboardButton size="sm" variant="secondary" fill="text" icon="copy" getText={() => absolute(justSaved)}>
              Copy link
            </ClipboardButton>
          </span>
        )}
        {others.length > 0 && (
          <span className={styles.line} data-testid={testIds.traces.savedList}>
            <span className={styles.muted}>
              {answerId ? 'Other saved answers of this trace:' : 'Saved answers of this trace:'}
            </span>{' '}
            {others.slice(0, 5).map((a, i) => (
              <React.Fragment key={a.id}>
                {i > 0 && ' · '}
                <AppLink href={answerHref(traceId, a.id)} title={a.title ?? undefined}>
                  {when(a.createdMs)}
                </AppLink>
              </React.Fragment>
            ))}
          </span>
        )}
      </div>
      {error && (
        <Alert severity="error" title="The answer could not be saved">
          {error}
        </Alert>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  findings: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  muted: css({ color: theme.colors.text.secondary }),
  line: css({ margin: 0 }),
  saveRow: css({ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: theme.spacing(2) }),
});
