/**
 * Host-only page `/host/extension-point?id=<extension point id>&context=<JSON>`: renders the links plugins added to
 * an extension point for a context, as one of Grafana's own pages would (the trace view's header actions, a panel
 * menu), through @grafana/runtime's usePluginLinks. In the context JSON, `{"$dateTime": <epoch ms>}` stands for a
 * DateTime (Grafana passes a zoomed panel's range as DateTimes).
 */
import { dateTime } from '@grafana/data';
import { locationService, usePluginLinks } from '@grafana/runtime';
import { Alert, Stack } from '@grafana/ui';
import React, { useMemo } from 'react';

import { EXTENSION_POINT_IDS } from './hostTestIds';

function parseContext(text: string | null): object | undefined {
  if (!text) {
    return undefined;
  }
  return JSON.parse(text, (_key, value: unknown) =>
    value && typeof value === 'object' && '$dateTime' in value
      ? dateTime((value as { $dateTime: number }).$dateTime)
      : value
  ) as object;
}

export function ExtensionPointPage() {
  const search = locationService.getSearch();
  const extensionPointId = search.get('id') ?? '';
  const context = useMemo(() => parseContext(search.get('context')), [search]);
  const { links, isLoading } = usePluginLinks({ extensionPointId, context });
  return (
    <section data-testid={EXTENSION_POINT_IDS.container} data-loading={String(isLoading)}>
      <h2>Extension point {extensionPointId}</h2>
      {links.length === 0 && <Alert severity="info" title="No plugin adds a link here for this context" />}
      <Stack direction="column" gap={1}>
        {links.map((link) => (
          <a
            key={link.id}
            href={link.path}
            title={link.description}
            data-testid={EXTENSION_POINT_IDS.link(link.title)}
            onClick={link.onClick}
          >
            {link.title}
          </a>
        ))}
      </Stack>
    </section>
  );
}
