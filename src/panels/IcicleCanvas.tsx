/**
 * A trace as an icicle on canvas (laid out with d3-hierarchy in transforms/traceTree): x = time, y = depth, one bar
 * per span coloured by service. The critical path is drawn solid with a marker line, other spans faded; each label
 * shows total and exclusive (self) time. Keyboard: focus the chart, arrows move parent/child/sibling, Enter selects.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { useStyles2, useTheme2 } from '@grafana/ui';
import type { HierarchyNode } from 'd3-hierarchy';
import React, { useLayoutEffect, useMemo, useRef, useState } from 'react';

import { testIds } from '../testIds';
import { cellAt, icicleLayout, podOf, SYNTHETIC_ROOT, type SpanNode, type TraceTree } from '../transforms/traceTree';
import { measureRender } from './marks';
import { vizTooltipStyle } from './tooltipStyle';

export interface IcicleCanvasProps {
  tree: TraceTree;
  width: number;
  selectedSpanId?: string;
  onSelect?: (spanId: string) => void;
  /** Span id → rank of the root-cause candidate on it (drawn as a badge). */
  ranks?: Map<string, number>;
  rowHeight?: number;
}

const PALETTE = [
  'blue',
  'green',
  'purple',
  'orange',
  'yellow',
  'red',
  'super-light-blue',
  'dark-green',
  'dark-purple',
  'dark-orange',
];

function serviceColor(theme: GrafanaTheme2, service: string): string {
  let h = 0;
  for (let i = 0; i < service.length; i++) {
    h = (h * 31 + service.charCodeAt(i)) | 0;
  }
  return theme.visualization.getColorByName(PALETTE[Math.abs(h) % PALETTE.length]);
}

const fmtMs = (ms: number): string =>
  ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

export function IcicleCanvas({ tree, width, selectedSpanId, onSelect, ranks, rowHeight = 20 }: IcicleCanvasProps) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const layout = useMemo(() => icicleLayout(tree), [tree]);
  const [hover, setHover] = useState<{ node: HierarchyNode<SpanNode>; x: number; y: number } | undefined>();
  const [focusId, setFocusId] = useState<string | undefined>(selectedSpanId);
  const height = layout.depth * rowHeight;
  const byId = useMemo(() => new Map(layout.cells.map((c) => [c.node.data.id, c])), [layout]);

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !width) {
      return;
    }
    measureRender('icicle', () => {
      const dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      const ctx = canvas.getContext('2d')!;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.font = `${theme.typography.bodySmall.fontSize} ${theme.typography.fontFamily}`;
      ctx.textBaseline = 'middle';
      const colorCache = new Map<string, string>();
      // Until the engine's critical path is known, every span is drawn solid (nothing to set apart yet).
      const fadeOffPath = tree.criticalPath.length > 0;
      for (const cell of layout.cells) {
        const span = cell.node.data.span!;
        const solid = !fadeOffPath || Boolean(cell.node.data.critical);
        const x = cell.x0 * width;
        const w = Math.max(1, (cell.x1 - cell.x0) * width);
        const y = cell.depth * rowHeight;
        let color = colorCache.get(span.service);
        if (!color) {
          color = serviceColor(theme, span.service);
          colorCache.set(span.service, color);
        }
        ctx.globalAlpha = solid ? 1 : 0.35;
        ctx.fillStyle = color;
        ctx.fillRect(x, y + 1, w - (w > 2 ? 1 : 0), rowHeight - 2);
        ctx.globalAlpha = 1;
        if (span.status === 'error' || span.status === 'timeout') {
          ctx.fillStyle = theme.colors.error.main;
          ctx.fillRect(x, y + 1, Math.min(w, 4), rowHeight - 2);
        }
        if (cell.node.data.critical) {
          ctx.fillStyle = theme.colors.text.primary;
          ctx.fillRect(x, y + rowHeight - 3, w, 2);
        }
        if (cell.node.data.orphan) {
          ctx.strokeStyle = theme.colors.warning.main;
          ctx.setLineDash([3, 2]);
          ctx.strokeRect(x + 0.5, y + 1.5, w - 1, rowHeight - 3);
          ctx.setLineDash([]);
        }
        if (w > 40) {
          const rank = ranks?.get(span.spanId);
          const label = `${rank ? `#${rank} ` : ''}${span.service} ${span.name} · ${fmtMs(span.endMs - span.startMs)} (self ${fmtMs(cell.node.data.selfMs)})`;
          const maxChars = Math.floor((w - 6) / 6.5);
          ctx.fillStyle = solid ? theme.colors.getContrastText(color) : theme.colors.text.primary;
          ctx.fillText(
            label.length > maxChars ? `${label.slice(0, Math.max(0, maxChars - 1))}…` : label,
            x + 4,
            y + rowHeight / 2
          );
        }
      }
      const sel = selectedSpanId ? byId.get(selectedSpanId) : undefined;
      if (sel) {
        ctx.strokeStyle = theme.colors.primary.main;
        ctx.lineWidth = 2;
        ctx.strokeRect(
          sel.x0 * width + 1,
          sel.depth * rowHeight + 1,
          Math.max(2, (sel.x1 - sel.x0) * width - 2),
          rowHeight - 2
        );
        ctx.lineWidth = 1;
      }
      const foc = focusId && focusId !== selectedSpanId ? byId.get(focusId) : undefined;
      if (foc) {
        ctx.strokeStyle = theme.colors.text.primary;
        ctx.setLineDash([2, 2]);
        ctx.strokeRect(
          foc.x0 * width + 1,
          foc.depth * rowHeight + 1,
          Math.max(2, (foc.x1 - foc.x0) * width - 2),
          rowHeight - 2
        );
        ctx.setLineDash([]);
      }
    });
  }, [layout, width, height, rowHeight, theme, selectedSpanId, focusId, byId, ranks, tree.criticalPath.length]);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>): void => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    const cell = cellAt(layout.cells, width, rowHeight, x, y);
    setHover(cell ? { node: cell.node, x, y } : undefined);
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLCanvasElement>): void => {
    const cur = (focusId && byId.get(focusId)?.node) || layout.cells[0]?.node;
    if (!cur) {
      return;
    }
    let next: HierarchyNode<SpanNode> | undefined;
    const siblings = cur.parent?.children ?? [cur];
    const i = siblings.indexOf(cur);
    switch (e.key) {
      case 'ArrowUp':
        next = cur.parent && cur.parent.data.id !== SYNTHETIC_ROOT ? cur.parent : undefined;
        break;
      case 'ArrowDown':
        next = cur.children?.find((c) => c.data.critical) ?? cur.children?.[0];
        break;
      case 'ArrowLeft':
        next = siblings[i - 1];
        break;
      case 'ArrowRight':
        next = siblings[i + 1];
        break;
      case 'Enter':
      case ' ':
        onSelect?.(cur.data.id);
        e.preventDefault();
        return;
      default:
        return;
    }
    e.preventDefault();
    if (next) {
      setFocusId(next.data.id);
    }
  };

  const hs = hover?.node.data.span;
  return (
    <div className={styles.wrap} data-testid={testIds.viz.icicle}>
      <canvas
        ref={canvasRef}
        tabIndex={0}
        className={styles.canvas}
        style={{ width: width || '100%', height }}
        onMouseMove={onMove}
        onMouseLeave={() => setHover(undefined)}
        onClick={() => hover && onSelect?.(hover.node.data.id)}
        onKeyDown={onKeyDown}
        role="img"
        aria-label={`Trace with ${tree.spanCount} spans; critical path of ${tree.criticalPath.length} spans. Arrow keys move, Enter selects.`}
        data-testid={testIds.viz.icicleCanvas}
      />
      {hover && hs && (
        <div
          className={styles.tooltip}
          style={{ left: Math.min(hover.x + 12, Math.max(0, width - 300)), top: hover.y + 14 }}
        >
          <div className={styles.ttTitle}>
            {hs.service} · {hs.name}
          </div>
          <div>
            Duration {fmtMs(hs.endMs - hs.startMs)}, self {fmtMs(hover.node.data.selfMs)}
          </div>
          <div>
            Pod {podOf(hs) ?? '—'} · {hs.kind} · {hs.status}
          </div>
          {hover.node.data.critical && (
            <div>
              On the critical path: {fmtMs(hover.node.data.critical.onPathMs)}
              {hover.node.data.critical.skewCorrectedMs
                ? ` (clock skew corrected by ${fmtMs(Math.abs(hover.node.data.critical.skewCorrectedMs))})`
                : ''}
            </div>
          )}
          {hover.node.data.orphan && <div>Parent missing: broken propagation</div>}
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ position: 'relative', width: '100%' }),
  canvas: css({
    display: 'block',
    cursor: 'pointer',
    '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` },
  }),
  tooltip: css({ ...vizTooltipStyle(theme), maxWidth: 300 }),
  ttTitle: css({ fontWeight: theme.typography.fontWeightMedium }),
});
