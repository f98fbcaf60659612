/**
 * Grafana fills @grafana/data's standard field-config registry at boot (its core OptionsUI registry); panels' field
 * overrides and defaults (unit, min/max, decimals, display name, colour, thresholds, value mappings, links, no value)
 * are applied through it. The host registers the same ids with the same processors from @grafana/data; editors are
 * not needed (nothing edits a panel here).
 */
import {
  FieldColorModeId,
  ThresholdsMode,
  booleanOverrideProcessor,
  dataLinksOverrideProcessor,
  displayNameOverrideProcessor,
  identityOverrideProcessor,
  numberOverrideProcessor,
  standardFieldConfigEditorRegistry,
  stringOverrideProcessor,
  thresholdsOverrideProcessor,
  unitOverrideProcessor,
  valueMappingsOverrideProcessor,
  type FieldConfigPropertyItem,
} from '@grafana/data';

const noEditor = () => null;
const always = () => true;

function item(
  id: string,
  process: FieldConfigPropertyItem['process'],
  extra: Partial<FieldConfigPropertyItem> = {}
): FieldConfigPropertyItem {
  return {
    id,
    path: id,
    name: id,
    process,
    override: noEditor,
    editor: noEditor,
    shouldApply: always,
    settings: {},
    ...extra,
  } as FieldConfigPropertyItem;
}

export function registerStandardFieldConfigs(): void {
  standardFieldConfigEditorRegistry.setInit(() => [
    item('unit', unitOverrideProcessor),
    item('min', numberOverrideProcessor),
    item('max', numberOverrideProcessor),
    item('fieldMinMax', booleanOverrideProcessor),
    item('decimals', numberOverrideProcessor),
    item('displayName', displayNameOverrideProcessor),
    item('noValue', stringOverrideProcessor),
    item('color', identityOverrideProcessor, { defaultValue: { mode: FieldColorModeId.PaletteClassic } }),
    item('thresholds', thresholdsOverrideProcessor, {
      defaultValue: {
        mode: ThresholdsMode.Absolute,
        steps: [
          { value: -Infinity, color: 'green' },
          { value: 80, color: 'red' },
        ],
      },
    }),
    item('mappings', valueMappingsOverrideProcessor, { defaultValue: [] }),
    item('links', dataLinksOverrideProcessor),
    item('filterable', booleanOverrideProcessor),
  ]);
}
