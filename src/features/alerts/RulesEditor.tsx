/**
 * The composite rules' editor: the list (enable/disable), create and edit as JSON with one message per mistake, the
 * export and import (RulesFile), and who evaluates them. Every save sends the version the rules were read at: when
 * someone else saved meanwhile the proxy refuses (409) and the editor says so, with a reload that keeps the change
 * being typed. It reads the evaluator and the rules' version from the alerts answer (the page's runner, `data`).
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
import { Alert as AlertBox, Button, InteractiveTable, Switch, TextArea, useStyles2, type Column } from '@grafana/ui';
import React, { useMemo } from 'react';

import type { AlertRule } from '../../../contract';
import { api, type ApiError, type ApiResult } from '../../api/client';
import { download } from '../../scenes/download';
import { testIds } from '../../testIds';
import {
  describeCondition,
  EXAMPLE_RULE,
  readRulesFile,
  validateRuleText,
  type RuleProblem,
} from '../../transforms/alertRules';
import { ALERTS_REF } from './alertsQuery';
import { RulesFileButtons, RulesImportConfirm, type RulesFileActions } from './RulesFile';

interface RulesEditorState extends SceneObjectState {
  /** The alerts runner: its answer says who evaluates and the rules' version; a save runs it again. */
  data: SceneObjectRef<SceneQueryRunner>;
  rules?: AlertRule[];
  /** The version the rules were read at (sent back with every save). */
  version?: number;
  /** Why the proxy did not import its rules file at start. */
  notice?: string;
  loadError?: string;
  /** The rule being edited (JSON text) and whether it is new. */
  editing?: { text: string; originalId?: string };
  problems?: RuleProblem[];
  saveError?: string;
  /** A save refused because someone else saved first (409): the proxy's message. */
  conflict?: string;
  /** Said after a reload, export or import. */
  info?: string;
  saving?: boolean;
  /** A file picked for import, waiting for the user's confirmation. */
  pendingImport?: { fileName: string; rules: AlertRule[] };
  /** Who evaluates and the rules' version, as the latest alerts answer says. */
  evaluator?: string;
  rulesVersion?: number;
}

const message = (e: ApiError): string => `${e.message} (${e.code})`;

export class RulesEditor extends SceneObjectBase<RulesEditorState> implements RulesFileActions {
  static Component = RulesEditorRenderer;

  constructor(state: RulesEditorState) {
    super(state);
    // The rules do not depend on the time range: read once per visit (and on reload).
    this.addActivationHandler(() => {
      void this.loadRules();
      const sub = this.state.data.resolve().subscribeToState(({ data }) => {
        const custom = data?.series.find((f) => f.refId === ALERTS_REF)?.meta?.custom;
        if (
          custom &&
          (custom.evaluatorText !== this.state.evaluator || custom.rulesVersion !== this.state.rulesVersion)
        ) {
          this.setState({ evaluator: custom.evaluatorText, rulesVersion: custom.rulesVersion });
        }
      });
      return () => sub.unsubscribe();
    });
  }

  private async loadRules(): Promise<boolean> {
    const res = await api.alertRules();
    if (!res.ok) {
      this.setState({ loadError: message(res.error) });
      return false;
    }
    this.setState({ rules: res.data.rules, version: res.data.version, notice: res.data.notice, loadError: undefined });
    return true;
  }

  /** Reads the rules again (after a 409, or a change elsewhere); the rule being typed stays in the editor. */
  public async reload(): Promise<void> {
    if (await this.loadRules()) {
      const editing = this.state.editing;
      this.setState({
        conflict: undefined,
        saveError: undefined,
        info: `Reloaded the rules (version ${this.state.version ?? 0}).${editing ? ' Your rule is still in the editor: save it again to apply it.' : ' Apply your change again.'}`,
      });
    }
  }

  public edit(rule?: AlertRule): void {
    const rules = this.state.rules ?? [];
    this.setState({
      editing: {
        text: JSON.stringify(rule ?? { ...EXAMPLE_RULE, id: `rule-${rules.length + 1}` }, null, 2),
        originalId: rule?.id,
      },
      problems: undefined,
      saveError: undefined,
      info: undefined,
    });
  }

  public cancel(): void {
    this.setState({ editing: undefined, problems: undefined, saveError: undefined });
  }

  public setText(text: string): void {
    if (this.state.editing) {
      this.setState({ editing: { ...this.state.editing, text } });
    }
  }

  public async save(): Promise<void> {
    const editing = this.state.editing;
    if (!editing) {
      return;
    }
    const rules = this.state.rules ?? [];
    const v = validateRuleText(
      editing.text,
      rules.filter((r) => r.id !== editing.originalId).map((r) => r.id)
    );
    if (!v.ok) {
      this.setState({ problems: v.problems });
      return;
    }
    const idx = rules.findIndex((r) => r.id === editing.originalId);
    const next = [...rules];
    if (idx >= 0) {
      next[idx] = v.rule;
    } else {
      next.push(v.rule);
    }
    await this.send(api.putAlertRules({ rules: next, expectedVersion: this.state.version }), true);
  }

  public async toggle(rule: AlertRule, enabled: boolean): Promise<void> {
    const rules = (this.state.rules ?? []).map((r) => (r.id === rule.id ? { ...r, enabled } : r));
    await this.send(api.putAlertRules({ rules, expectedVersion: this.state.version }), false);
  }

  /** The rule set as a file (the proxy's export: the format its rules file and the import read). */
  public async exportRules(): Promise<void> {
    const res = await api.exportAlertRules();
    if (!res.ok) {
      this.setState({ saveError: message(res.error), info: undefined });
      return;
    }
    download(`hopscope-alert-rules-v${res.data.version}.json`, `${JSON.stringify(res.data, null, 2)}\n`);
    this.setState({
      info: `Exported ${res.data.rules.length} rule(s) (version ${res.data.version}).`,
      saveError: undefined,
    });
  }

  /** A file picked for import: read and checked here, then confirmed by the user (it replaces every rule). */
  public async pickImport(file: File): Promise<void> {
    const read = readRulesFile(await file.text());
    if (!read.ok) {
      this.setState({ saveError: `${file.name}: ${read.message}`, info: undefined });
      return;
    }
    this.setState({ pendingImport: { fileName: file.name, rules: read.rules }, saveError: undefined, info: undefined });
  }

  public cancelImport(): void {
    this.setState({ pendingImport: undefined });
  }

  public async confirmImport(): Promise<void> {
    const pending = this.state.pendingImport;
    if (!pending) {
      return;
    }
    this.setState({ pendingImport: undefined });
    if (await this.send(api.importAlertRules({ rules: pending.rules, expectedVersion: this.state.version }), false)) {
      this.setState({
        info: `Imported ${pending.rules.length} rule(s) from ${pending.fileName} (version ${this.state.version}).`,
      });
    }
  }

  /** One save (PUT or import): a 409 is a conflict to reload, anything else refused its message. */
  private async send(
    call: Promise<ApiResult<{ rules: AlertRule[]; version?: number }>>,
    closeEditor: boolean
  ): Promise<boolean> {
    this.setState({ saving: true, saveError: undefined, conflict: undefined, info: undefined });
    const res = await call;
    if (!res.ok) {
      this.setState(
        res.error.status === 409
          ? { saving: false, conflict: res.error.message }
          : { saving: false, saveError: message(res.error) }
      );
      return false;
    }
    this.setState({
      rules: res.data.rules,
      version: res.data.version,
      saving: false,
      ...(closeEditor ? { editing: undefined, problems: undefined } : {}),
    });
    const runner = this.state.data.resolve();
    if (runner.isActive) {
      runner.runQueries();
    }
    return true;
  }
}

function RulesTable({ model }: { model: RulesEditor }) {
  const { rules = [], saving } = model.useState();
  const columns = useMemo<Array<Column<AlertRule>>>(
    () => [
      {
        id: 'enabled',
        header: 'On',
        disableGrow: true,
        cell: ({ row }) => (
          <Switch
            value={row.original.enabled}
            disabled={saving}
            onChange={(e) => model.toggle(row.original, e.currentTarget.checked)}
            aria-label={`Enable ${row.original.name}`}
            data-testid={testIds.alerts.ruleToggle(row.original.id)}
          />
        ),
      },
      { id: 'name', header: 'Rule', sortType: 'string' },
      {
        id: 'when',
        header: 'When all of',
        cell: ({ row }) =>
          `${row.original.conditions.map(describeCondition).join(' AND ')} within ${row.original.withinMs / 1000} s`,
      },
      { id: 'severity', header: 'Severity', sortType: 'string' },
      {
        id: 'edit',
        header: '',
        disableGrow: true,
        cell: ({ row }) => (
          <Button
            size="sm"
            variant="secondary"
            fill="text"
            icon="pen"
            onClick={() => model.edit(row.original)}
            data-testid={testIds.alerts.ruleEdit(row.original.id)}
          >
            Edit
          </Button>
        ),
      },
    ],
    [model, saving]
  );
  return (
    <div data-testid={testIds.alerts.rules}>
      <InteractiveTable columns={columns} data={rules} getRowId={(r) => r.id} />
    </div>
  );
}

function RulesEditorRenderer({ model }: SceneComponentProps<RulesEditor>) {
  const {
    rules,
    version,
    notice,
    loadError,
    editing,
    problems,
    saveError,
    conflict,
    info,
    saving,
    pendingImport,
    evaluator,
    rulesVersion,
  } = model.useState();
  const styles = useStyles2(getStyles);
  const stale = !conflict && version !== undefined && rulesVersion !== undefined && rulesVersion > version;
  return (
    <div className={styles.page}>
      {conflict && (
        <div data-testid={testIds.alerts.conflict} role="alert">
          <AlertBox severity="warning" title="Someone else saved the rules meanwhile: nothing was saved">
            <p>{conflict}</p>
            <Button size="sm" icon="sync" onClick={() => model.reload()} data-testid={testIds.alerts.reload}>
              Reload the rules
            </Button>
          </AlertBox>
        </div>
      )}
      {stale && (
        <div data-testid={testIds.alerts.stale}>
          <AlertBox
            severity="info"
            title={`The rules changed since this page read them (version ${version} → ${rulesVersion})`}
          >
            <Button size="sm" variant="secondary" icon="sync" onClick={() => model.reload()}>
              Reload the rules
            </Button>
          </AlertBox>
        </div>
      )}
      {saveError && !editing && (
        <div data-testid={testIds.alerts.saveError} role="alert">
          <AlertBox severity="error" title="Could not save the rules">
            {saveError}
          </AlertBox>
        </div>
      )}
      {info && (
        <p className={styles.info} data-testid={testIds.alerts.info} role="status">
          {info}
        </p>
      )}
      <section className={styles.rules} aria-label="Composite rules">
        <div className={styles.header}>
          <h3 className={styles.title}>
            Composite rules{' '}
            {version !== undefined && (
              <span className={styles.muted} data-testid={testIds.alerts.version}>
                version {version}
              </span>
            )}
          </h3>
          <div className={styles.actions}>
            <RulesFileButtons model={model} saving={saving} rules={rules} />
            <Button size="sm" icon="plus" onClick={() => model.edit()} data-testid={testIds.alerts.newRule}>
              New rule
            </Button>
          </div>
        </div>
        {evaluator && (
          <p className={styles.help} data-testid={testIds.alerts.evaluator}>
            {evaluator}
          </p>
        )}
        {notice && (
          <AlertBox severity="warning" title="The rules file was not imported">
            {notice}
          </AlertBox>
        )}
        {loadError ? (
          <AlertBox severity="error" title="The rules could not load">
            {loadError}
          </AlertBox>
        ) : rules === undefined ? (
          <p className={styles.help}>Loading…</p>
        ) : rules.length === 0 ? (
          <p className={styles.help}>
            No rule yet: create one (the example joins slow TLS handshakes and a GPU allocation failure).
          </p>
        ) : (
          <RulesTable model={model} />
        )}
      </section>
      {editing && (
        <div className={styles.editor} data-testid={testIds.alerts.editor}>
          <h4>{editing.originalId ? `Edit rule ${editing.originalId}` : 'New rule'}</h4>
          <p className={styles.help}>
            JSON: <code>id</code>, <code>name</code>, <code>conditions</code> (metric: expr/op/threshold; kernel: type,
            minDurationMs, consecutive or atLeast), <code>withinMs</code>, <code>lookbackMs</code>,{' '}
            <code>severity</code>, <code>enabled</code>.
          </p>
          <TextArea
            rows={14}
            value={editing.text}
            onChange={(e) => model.setText(e.currentTarget.value)}
            className={styles.code}
            aria-label="Rule JSON"
          />
          {(problems?.length || saveError) && (
            <div data-testid={testIds.alerts.editorError} role="alert">
              <AlertBox severity="error" title="The rule cannot be saved yet">
                <ul>
                  {problems?.map((p, i) => (
                    <li key={i}>{p.text}</li>
                  ))}
                  {saveError && <li>{saveError}</li>}
                </ul>
              </AlertBox>
            </div>
          )}
          <div className={styles.buttons}>
            <Button onClick={() => model.save()} disabled={saving} data-testid={testIds.alerts.save}>
              Save
            </Button>
            <Button variant="secondary" onClick={() => model.cancel()}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      <RulesImportConfirm model={model} pendingImport={pendingImport} rules={rules} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  rules: css({
    padding: theme.spacing(1),
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
    background: theme.colors.background.primary,
  }),
  header: css({
    display: 'flex',
    justifyContent: 'space-between',
    alignItems: 'center',
    marginBottom: theme.spacing(1),
    gap: theme.spacing(1),
    flexWrap: 'wrap',
  }),
  title: css({ ...theme.typography.h5, margin: 0 }),
  muted: css({
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    fontWeight: theme.typography.fontWeightRegular,
  }),
  editor: css({
    padding: theme.spacing(2),
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.default,
    background: theme.colors.background.secondary,
  }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  info: css({ color: theme.colors.text.secondary, margin: 0 }),
  code: css({ fontFamily: theme.typography.fontFamilyMonospace }),
  buttons: css({ display: 'flex', gap: theme.spacing(1), marginTop: theme.spacing(1) }),
  actions: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center' }),
});
