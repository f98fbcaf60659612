/** The Runs list's filters in one row: its scene variables' pickers (scenario, verdict), URL state `var-<name>`. */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  SceneObjectBase,
  VariableValueSelectors,
  type SceneComponentProps,
  type SceneObjectState,
} from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { testIds } from '../../testIds';

interface RunsFiltersState extends SceneObjectState {
  selectors: VariableValueSelectors;
}

export class RunsFilters extends SceneObjectBase<RunsFiltersState> {
  static Component = RunsFiltersRenderer;

  constructor() {
    super({ selectors: new VariableValueSelectors({}) });
  }
}

function RunsFiltersRenderer({ model }: SceneComponentProps<RunsFilters>) {
  const { selectors } = model.useState();
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.row} data-testid={testIds.runs.filters}>
      <selectors.Component model={selectors} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  row: css({ display: 'flex', flexWrap: 'wrap', gap: theme.spacing(1), alignItems: 'center' }),
});
