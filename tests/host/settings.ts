/**
 * The plugin settings Grafana keeps per org (`/api/plugins/<id>/settings`), in memory: jsonData is readable,
 * secureJsonData is write-only (reads only say which keys are set, in `secureJsonFields`), as in Grafana.
 */
export interface PluginSettingsUpdate {
  enabled?: boolean;
  pinned?: boolean;
  jsonData?: Record<string, unknown>;
  secureJsonData?: Record<string, string>;
}

export class PluginSettingsStore {
  enabled = true;
  pinned = true;
  jsonData: Record<string, unknown>;
  private secure: Record<string, string>;

  constructor(initial: { jsonData?: Record<string, unknown>; secureJsonData?: Record<string, string> } = {}) {
    this.jsonData = { ...initial.jsonData };
    this.secure = { ...initial.secureJsonData };
  }

  /** What the browser may see: which secure keys are set, never their values. */
  get secureJsonFields(): Record<string, boolean> {
    return Object.fromEntries(Object.keys(this.secure).map((k) => [k, true]));
  }

  /** Only the server side (the data proxy) reads the secrets. */
  get secureJsonData(): Record<string, string> {
    return { ...this.secure };
  }

  update(body: PluginSettingsUpdate): void {
    if (typeof body.enabled === 'boolean') {
      this.enabled = body.enabled;
    }
    if (typeof body.pinned === 'boolean') {
      this.pinned = body.pinned;
    }
    if (body.jsonData && typeof body.jsonData === 'object') {
      this.jsonData = { ...body.jsonData };
    }
    // Keys sent replace the stored ones; an empty value removes the secret (Grafana's "reset").
    for (const [key, value] of Object.entries(body.secureJsonData ?? {})) {
      if (typeof value === 'string' && value !== '') {
        this.secure[key] = value;
      } else {
        delete this.secure[key];
      }
    }
  }
}
