import { css } from '@emotion/css';
import type { AppPluginMeta, GrafanaTheme2, PluginConfigPageProps, PluginMeta } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import { Alert, Button, Field, FieldSet, Input, SecretInput, useStyles2 } from '@grafana/ui';
import React, { useState, type ChangeEvent, type FormEvent } from 'react';
import { lastValueFrom } from 'rxjs';

import { PLUGIN_ID } from '../../constants';
import type { HopscopeJsonData } from '../../settings';
import { testIds } from '../../testIds';
import { normalizeProxyUrl, validateProxyUrl } from './validateProxyUrl';

export type { HopscopeJsonData };

/** A Grafana data source uid: letters, digits, `-` and `_`, at most 40 (empty: not chosen). */
export function validateDatasourceUid(uid: string): string | undefined {
  return uid === '' || /^[A-Za-z0-9_-]{1,40}$/.test(uid)
    ? undefined
    : 'A data source uid is 1–40 letters, digits, "-" or "_" (Connections → Data sources → the data source → its URL).';
}

export type AppConfigProps = PluginConfigPageProps<AppPluginMeta<HopscopeJsonData>>;

interface ConfigState {
  proxyUrl: string;
  prometheusDatasourceUid: string;
  tempoDatasourceUid: string;
  proxyToken: string;
  /** True while a token is stored server-side and not reset (Grafana never sends the token back). */
  tokenConfigured: boolean;
}

/** The config page: proxy URL (validated inline) and the access token the route sends as a bearer token. */
export function AppConfig({ plugin }: AppConfigProps) {
  const styles = useStyles2(getStyles);
  const { enabled, pinned, jsonData, secureJsonFields } = plugin.meta;
  const [state, setState] = useState<ConfigState>({
    proxyUrl: jsonData?.proxyUrl ?? '',
    prometheusDatasourceUid: jsonData?.prometheusDatasourceUid ?? '',
    tempoDatasourceUid: jsonData?.tempoDatasourceUid ?? '',
    proxyToken: '',
    tokenConfigured: Boolean(secureJsonFields?.proxyToken),
  });
  const [urlError, setUrlError] = useState<string | undefined>();
  const [saveError, setSaveError] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const error = validateProxyUrl(state.proxyUrl);
    setUrlError(error);
    if (
      error ||
      validateDatasourceUid(state.prometheusDatasourceUid) ||
      validateDatasourceUid(state.tempoDatasourceUid)
    ) {
      return;
    }
    setSaving(true);
    setSaveError(undefined);
    try {
      await updatePluginSettings(PLUGIN_ID, {
        enabled,
        pinned,
        jsonData: {
          ...jsonData,
          proxyUrl: normalizeProxyUrl(state.proxyUrl),
          prometheusDatasourceUid: state.prometheusDatasourceUid || undefined,
          tempoDatasourceUid: state.tempoDatasourceUid || undefined,
        },
        // Send the token only when it changed: typed anew, or reset to empty.
        secureJsonData: state.tokenConfigured ? undefined : { proxyToken: state.proxyToken },
      });
      // Grafana's app template reloads so every part of the app sees the new settings.
      window.location.reload();
    } catch (err) {
      setSaveError(err instanceof Error ? err.message : 'Saving the settings failed');
      setSaving(false);
    }
  };

  return (
    <form onSubmit={onSubmit} data-testid={testIds.appConfig.container} noValidate>
      <FieldSet label="Hopscope proxy">
        <Field
          label="Proxy URL"
          description="Where Grafana reaches the Hopscope backend proxy. Requests from the app go through Grafana's data proxy to this URL."
          invalid={Boolean(urlError)}
          error={<span data-testid={testIds.appConfig.proxyUrlError}>{urlError}</span>}
        >
          <Input
            id="hopscope-proxy-url"
            width={60}
            value={state.proxyUrl}
            placeholder="http://127.0.0.1:3301"
            data-testid={testIds.appConfig.proxyUrl}
            onChange={(e: ChangeEvent<HTMLInputElement>) => {
              setState({ ...state, proxyUrl: e.target.value });
              if (urlError) {
                setUrlError(validateProxyUrl(e.target.value));
              }
            }}
            onBlur={() => setUrlError(state.proxyUrl ? validateProxyUrl(state.proxyUrl) : undefined)}
          />
        </Field>
        <Field
          label="Access token"
          description="Sent by Grafana as a bearer token to the proxy (HOPSCOPE_PROXY_TOKEN on the proxy). Stored encrypted; never shown again."
        >
          <SecretInput
            id="hopscope-proxy-token"
            width={60}
            data-testid={testIds.appConfig.proxyToken}
            isConfigured={state.tokenConfigured}
            value={state.proxyToken}
            placeholder="Token of the Hopscope proxy (optional)"
            onChange={(e: ChangeEvent<HTMLInputElement>) => setState({ ...state, proxyToken: e.target.value.trim() })}
            onReset={() => setState({ ...state, proxyToken: '', tokenConfigured: false })}
          />
        </Field>
      </FieldSet>
      <FieldSet label="Your data sources">
        <p className={styles.hint}>
          Panels computed from PromQL offer “Explore” on your Prometheus, and a trace offers it on your Tempo: give
          their data source uids (the last part of the data source’s URL in Grafana, e.g.{' '}
          <code>hopscope-prometheus</code>).
        </p>
        <DatasourceUidField
          kind="Prometheus"
          id="hopscope-prometheus-uid"
          testId={testIds.appConfig.prometheusUid}
          value={state.prometheusDatasourceUid}
          onChange={(uid) => setState({ ...state, prometheusDatasourceUid: uid })}
        />
        <DatasourceUidField
          kind="Tempo"
          id="hopscope-tempo-uid"
          testId={testIds.appConfig.tempoUid}
          value={state.tempoDatasourceUid}
          onChange={(uid) => setState({ ...state, tempoDatasourceUid: uid })}
        />
        {saveError && (
          <Alert severity="error" title="Could not save">
            {saveError}
          </Alert>
        )}
        <div className={styles.actions}>
          <Button
            type="submit"
            data-testid={testIds.appConfig.submit}
            disabled={saving}
            icon={saving ? 'spinner' : undefined}
          >
            Save settings
          </Button>
        </div>
      </FieldSet>
    </form>
  );
}

async function updatePluginSettings(pluginId: string, data: Partial<PluginMeta<HopscopeJsonData>>): Promise<void> {
  await lastValueFrom(
    getBackendSrv().fetch({ url: `/api/plugins/${pluginId}/settings`, method: 'POST', data, showErrorAlert: false })
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  hint: css({ color: theme.colors.text.secondary, maxWidth: theme.spacing(100) }),
  actions: css({
    marginTop: theme.spacing(2),
  }),
});

/** A data source uid, checked as typed; the placeholder is the uid our provisioning gives that kind. */
function DatasourceUidField(props: {
  kind: 'Prometheus' | 'Tempo';
  id: string;
  testId: string;
  value: string;
  onChange: (uid: string) => void;
}) {
  const error = validateDatasourceUid(props.value);
  return (
    <Field label={`${props.kind} data source uid`} invalid={Boolean(error)} error={error}>
      <Input
        id={props.id}
        width={40}
        value={props.value}
        placeholder={`hopscope-${props.kind.toLowerCase()}`}
        data-testid={props.testId}
        onChange={(e: ChangeEvent<HTMLInputElement>) => props.onChange(e.target.value.trim())}
      />
    </Field>
  );
}
