// Grafana-internal entry points the host needs (Grafana core calls them at boot; they are not public exports).
// esbuild maps these names to the files of the installed packages (tests/host/clientBundle.ts), so they are the
// same module instances as the public entry points.
declare module 'grafana-runtime-internal/plugin-page' {
  import type { PluginPageProps } from '@grafana/runtime';
  import type { ComponentType } from 'react';
  export function setPluginPage(component: ComponentType<PluginPageProps>): void;
}

declare module 'grafana-i18n-internal' {
  export function initializeI18n(
    options: { language?: string; ns?: string[] },
    regionalFormat?: string
  ): Promise<{ language: string }>;
}

// d3 is shared by Grafana under its bare name; its types are not installed (plugins use d3-* packages instead).
declare module 'd3';
