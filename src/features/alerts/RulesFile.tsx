/**
 * The rules as a file: export (the proxy's export format, downloaded) and import (a file picked, read and checked in
 * the browser, then confirmed: it replaces every rule). The editor (RulesEditor) does the calls.
 */
import { Button, ConfirmModal } from '@grafana/ui';
import React, { useRef } from 'react';

import type { AlertRule } from '../../../contract';
import { testIds } from '../../testIds';

/** What the buttons and the confirmation call (the editor's methods; an interface so this file needs not import it). */
export interface RulesFileActions {
  exportRules(): Promise<void>;
  pickImport(file: File): Promise<void>;
  confirmImport(): Promise<void>;
  cancelImport(): void;
}

/** Export, and import from a file (a hidden file input behind a button). */
export function RulesFileButtons({
  model,
  saving,
  rules,
}: {
  model: RulesFileActions;
  saving?: boolean;
  rules?: AlertRule[];
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <Button
        size="sm"
        variant="secondary"
        icon="download-alt"
        onClick={() => model.exportRules()}
        disabled={rules === undefined}
        data-testid={testIds.alerts.exportRules}
      >
        Export
      </Button>
      <Button
        size="sm"
        variant="secondary"
        icon="upload"
        onClick={() => input.current?.click()}
        disabled={saving || rules === undefined}
        data-testid={testIds.alerts.importRules}
      >
        Import
      </Button>
      <input
        ref={input}
        type="file"
        accept="application/json,.json"
        hidden
        aria-label="Rules file to import"
        data-testid={testIds.alerts.importFile}
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (file) {
            void model.pickImport(file);
          }
        }}
      />
    </>
  );
}

/** Asks before an import replaces the rules. */
export function RulesImportConfirm({
  model,
  pendingImport,
  rules,
}: {
  model: RulesFileActions;
  pendingImport?: { fileName: string; rules: AlertRule[] };
  rules?: AlertRule[];
}) {
  return (
    <ConfirmModal
      isOpen={pendingImport !== undefined}
      title="Replace the rules?"
      body={
        pendingImport
          ? `Replace the ${rules?.length ?? 0} rule(s) with the ${pendingImport.rules.length} rule(s) of ${pendingImport.fileName}?`
          : ''
      }
      confirmText="Import"
      onConfirm={() => model.confirmImport()}
      onDismiss={() => model.cancelImport()}
    />
  );
}
