/** A stand-in core panel as Grafana hands it to VizPanel: a PanelPlugin with the meta of the core panel it stands for. */
import { FieldColorModeId, PanelPlugin, PluginType, type PanelPluginMeta, type PanelProps } from '@grafana/data';
import type { ComponentType } from 'react';

/** The default colour mode of a core panel's fields (its `useFieldConfig` standard option): series palette or thresholds. */
export type DefaultColor = 'palette' | 'thresholds';

export function standIn<O extends object>(
  id: string,
  name: string,
  panel: ComponentType<PanelProps<O>>,
  options: { color?: DefaultColor; skipDataQuery?: boolean; annotations?: boolean } = {}
): PanelPlugin<O> {
  const plugin = new PanelPlugin<O>(panel);
  // As the core panel declares it: VizPanel hands annotations only to panels that say they draw them.
  plugin.setDataSupport({ annotations: Boolean(options.annotations), alertStates: false });
  const mode = options.color === 'thresholds' ? FieldColorModeId.Thresholds : FieldColorModeId.PaletteClassic;
  plugin.useFieldConfig({ standardOptions: { color: { defaultValue: { mode } } } });
  plugin.meta = {
    id,
    name,
    type: PluginType.panel,
    module: `core:plugin/${id}`,
    baseUrl: `public/app/plugins/panel/${id}`,
    sort: 0,
    skipDataQuery: options.skipDataQuery,
    info: {
      author: { name: 'Grafana Labs (host stand-in)' },
      description: `${name} (stand-in built from @grafana/ui)`,
      links: [],
      logos: { small: '', large: '' },
      screenshots: [],
      updated: '',
      version: '',
    },
  } as PanelPluginMeta;
  return plugin;
}

/** Options of a stand-in that reads none (the core panel's options do not change what the app shows). */
export type NoOptions = Record<string, unknown>;
