import type { GrafanaTheme2 } from '@grafana/data';

/** The floating tooltip of our canvas visualisations (heatmap, icicle): Grafana's elevated surface and tokens. */
export const vizTooltipStyle = (theme: GrafanaTheme2) => ({
  position: 'absolute' as const,
  zIndex: theme.zIndex.tooltip,
  pointerEvents: 'none' as const,
  background: theme.colors.background.elevated,
  border: `1px solid ${theme.colors.border.weak}`,
  boxShadow: theme.shadows.z2,
  borderRadius: theme.shape.radius.default,
  padding: theme.spacing(1),
  fontSize: theme.typography.bodySmall.fontSize,
});
