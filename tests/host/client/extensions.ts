/**
 * Grafana's UI extensions, reduced to what a plugin sees (public/app/features/plugins/extensions in Grafana 12.4):
 * - added links: the app's `addLink` configs are registered as AddedLinksRegistry does (a title, a configure
 *   function or none, a path or an onClick, a path under `/a/<pluginId>/`), and — stricter than a production
 *   Grafana, as Grafana in development mode is — only when plugin.json `extensions.addedLinks` declares the title
 *   and every target. `usePluginLinks` calls each link's `configure` with a read-only view of the context
 *   (getReadOnlyProxy: DateTimes handed out as copies), hides it when that returns undefined, refuses a path outside
 *   the app and adds Grafana's tracking parameters (`uel_pid`, `uel_epid`) to the path;
 * - exposed components: `usePluginComponent(id)` answers with what is registered under the id — nothing, unless the
 *   host page was started with stand-ins (`standInExposedComponents.tsx`) — and only to a plugin whose plugin.json
 *   `dependencies.extensions.exposedComponents` names the id.
 * Problems are console errors, which the e2e tests report.
 */
import {
  dateTime,
  isDateTime,
  PluginExtensionTypes,
  urlUtil,
  type AppPlugin,
  type PluginExtensionAddedLinkConfig,
  type PluginExtensionLink,
} from '@grafana/data';
import { config, setPluginComponentHook, setPluginLinksHook, type UsePluginLinksOptions } from '@grafana/runtime';
import type { ComponentType } from 'react';

interface AddedLink {
  pluginId: string;
  extensionPointId: string;
  config: PluginExtensionAddedLinkConfig;
}

interface AppExtensionsMeta {
  extensions?: { addedLinks?: Array<{ title: string; targets: string[] }> };
  dependencies?: { extensions?: { exposedComponents?: string[] } };
}

const addedLinks: AddedLink[] = [];
const exposedComponents = new Map<string, ComponentType<never>>();

/** What `config.apps[<id>]` says of a plugin's extensions, from its plugin.json (Grafana's boot data). */
function appMeta(pluginId: string): AppExtensionsMeta {
  return (config.apps[pluginId] ?? {}) as AppExtensionsMeta;
}

const isLinkPathValid = (pluginId: string, path: string): boolean => path.startsWith(`/a/${pluginId}/`);

/** AddedLinksRegistry.mapToRegistry for one app plugin. */
export function registerAddedLinks(pluginId: string, plugin: AppPlugin): void {
  const declared = appMeta(pluginId).extensions?.addedLinks ?? [];
  for (const link of plugin.addedLinkConfigs) {
    const targets = Array.isArray(link.targets) ? link.targets : [link.targets];
    const problem = !link.title
      ? 'Title is missing.'
      : link.configure !== undefined && typeof link.configure !== 'function'
        ? 'configure is not a function.'
        : !link.path && !link.onClick
          ? 'Either "path" or "onClick" is required.'
          : link.path && !isLinkPathValid(pluginId, link.path)
            ? `The "path" is required and should start with "/a/${pluginId}/".`
            : !targets.every((t) => declared.some((d) => d.title === link.title && d.targets.includes(t)))
              ? 'The extension was not declared in plugin.json (extensions.addedLinks with this title and its targets).'
              : undefined;
    if (problem) {
      console.error(`Could not register link extension "${link.title}" of ${pluginId}. Reason: ${problem}`);
      continue;
    }
    for (const extensionPointId of targets) {
      addedLinks.push({ pluginId, extensionPointId, config: link });
    }
  }
}

/** Grafana's getReadOnlyProxy: writes refused, nested objects read-only too, DateTimes copied on read. */
function readOnly<T extends object>(obj: T, cache = new WeakMap<object, unknown>()): T {
  return new Proxy(obj, {
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (isDateTime(value)) {
        return dateTime(value);
      }
      if (value && typeof value === 'object') {
        if (!cache.has(value)) {
          cache.set(value, readOnly(value, cache));
        }
        return cache.get(value);
      }
      return value;
    },
  });
}

/** Grafana's id of an added link: a hash of plugin, extension point and title. */
function extensionId(pluginId: string, extensionPointId: string, title: string): string {
  return Array.from(`${pluginId}${extensionPointId}${title}`)
    .reduce((s, c) => (Math.imul(31, s) + c.charCodeAt(0)) | 0, 0)
    .toString();
}

/** usePluginLinks, computed on each call (the host's contexts are small). */
export function pluginLinks({
  extensionPointId,
  context,
  limitPerPlugin,
}: UsePluginLinksOptions): PluginExtensionLink[] {
  const frozen = context ? readOnly(context) : {};
  const perPlugin: Record<string, number> = {};
  const out: PluginExtensionLink[] = [];
  for (const { pluginId, config: link } of addedLinks.filter((l) => l.extensionPointId === extensionPointId)) {
    if (limitPerPlugin && (perPlugin[pluginId] ?? 0) >= limitPerPlugin) {
      continue;
    }
    let overrides:
      | Partial<{
          title: string;
          description: string;
          path: string;
          icon: PluginExtensionLink['icon'];
          category: string;
        }>
      | undefined = {};
    try {
      overrides = link.configure ? link.configure(frozen as never) : {};
    } catch (err) {
      console.error(`Failed to configure link with title "${link.title}"`, err);
      continue;
    }
    if (overrides === undefined) {
      continue; // hidden by its configure
    }
    const {
      title = link.title,
      description = link.description ?? '',
      path = link.path,
      icon = link.icon,
      category = link.category,
    } = overrides;
    if (path && !isLinkPathValid(pluginId, path)) {
      console.error(`Failed to configure link with title "${link.title}": invalid path "${path}"`);
      continue;
    }
    perPlugin[pluginId] = (perPlugin[pluginId] ?? 0) + 1;
    out.push({
      id: extensionId(pluginId, extensionPointId, link.title),
      type: PluginExtensionTypes.link,
      pluginId,
      title,
      description,
      icon,
      category,
      path: path
        ? urlUtil.appendQueryToUrl(path, urlUtil.toUrlParams({ uel_pid: pluginId, uel_epid: extensionPointId }))
        : undefined,
    });
  }
  return out;
}

/** Registers a component under an exposed id (Grafana core registers its own at boot). */
export function exposeComponent(id: string, component: ComponentType<never>): void {
  exposedComponents.set(id, component);
}

/** Installs the hooks @grafana/runtime's usePluginLinks / usePluginComponent call, for `pluginId`'s page. */
export function setupPluginExtensions(pluginId: string): void {
  setPluginLinksHook((options) => ({ isLoading: false, links: pluginLinks(options) }));
  setPluginComponentHook((id: string) => {
    const declared = appMeta(pluginId).dependencies?.extensions?.exposedComponents ?? [];
    if (!declared.includes(id)) {
      console.error(
        `${pluginId} uses the exposed component "${id}" without declaring it in plugin.json (dependencies.extensions.exposedComponents)`
      );
      return { isLoading: false, component: null };
    }
    return { isLoading: false, component: (exposedComponents.get(id) as ComponentType<object> | undefined) ?? null };
  });
}
