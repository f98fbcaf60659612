/**
 * STAND-INS, not Grafana: two components the host registers under the ids Grafana 12.4 exposes them by, only when
 * a test starts the host with `standInExposedComponents` (Grafana's own are in its bundle, not on npm). They take
 * the props Grafana's take and show what they were given, so a test can see that the app's panel menu opens them
 * with the panel's query:
 * - `grafana/add-to-dashboard-form/v1` (AddToDashboardFormExposedComponent: `{ onClose, buildPanel, timeRange?,
 *   options? }`, the form inside the consumer's modal);
 * - `grafana/alerting/create-alert-from-panel/v1` (CreateAlertFromPanelExposedComponent: `{ panel: { title?,
 *   targets, datasource?, maxDataPoints? }, range?, onDismiss }`, a modal of its own).
 */
import type { TimeRange } from '@grafana/data';
import type { Panel } from '@grafana/schema';
import { Button, Modal } from '@grafana/ui';
import React from 'react';

import { exposeComponent } from './extensions';
import { STAND_IN_IDS } from './hostTestIds';

interface AddToDashboardFormProps {
  onClose: () => void;
  buildPanel: () => Panel;
  timeRange?: TimeRange;
  options?: { useAbsolutePath?: boolean };
}

function AddToDashboardFormStandIn({ onClose, buildPanel, timeRange }: AddToDashboardFormProps) {
  const panel = buildPanel();
  return (
    <div data-testid={STAND_IN_IDS.addToDashboard}>
      <p>Host stand-in for Grafana&apos;s add-to-dashboard form: this is the panel it would add.</p>
      <pre data-testid={STAND_IN_IDS.payload}>{JSON.stringify({ panel, range: timeRange?.raw }, null, 2)}</pre>
      <Button variant="secondary" onClick={onClose}>
        Cancel
      </Button>
    </div>
  );
}

interface CreateAlertFromPanelProps {
  panel: { title?: string; targets: unknown[]; datasource?: { uid?: string; type?: string }; maxDataPoints?: number };
  range?: { raw: unknown };
  onDismiss: () => void;
}

function CreateAlertFromPanelStandIn({ panel, range, onDismiss }: CreateAlertFromPanelProps) {
  return (
    <Modal title="Create alert rule (host stand-in)" isOpen onDismiss={onDismiss}>
      <div data-testid={STAND_IN_IDS.createAlert}>
        <p>Host stand-in for Grafana&apos;s create-alert-from-panel: the queries it would open the rule form with.</p>
        <pre data-testid={STAND_IN_IDS.payload}>{JSON.stringify({ panel, range: range?.raw }, null, 2)}</pre>
        <Button variant="secondary" onClick={onDismiss}>
          Cancel
        </Button>
      </div>
    </Modal>
  );
}

export function registerStandInExposedComponents(): void {
  exposeComponent('grafana/add-to-dashboard-form/v1', AddToDashboardFormStandIn as never);
  exposeComponent('grafana/alerting/create-alert-from-panel/v1', CreateAlertFromPanelStandIn as never);
}
