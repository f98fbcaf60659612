/** One process the demo starts. Each part of Hopscope adds one file in scripts/demo-parts/ exporting `part`. */
export interface DemoPart {
  /** Short name shown in the demo's log prefix. */
  name: string;
  /** Lower starts first; parts with the same order start in parallel. */
  order: number;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Polled until it answers 2xx; the next order waits for it. */
  readyUrl?: string;
  /** `true` when this machine can run the part; otherwise the reason it is skipped (printed, not fatal). */
  available?: () => Promise<true | string>;
  /** The URL to print for a person, if this part is what they open. */
  openUrl?: string;
  /** Ports the part listens on, and the variable that moves each: checked free before anything starts. */
  ports?: Array<{ port: number; env: string }>;
}

export interface DemoContext {
  /** A temp dir removed on exit: data dirs (Prometheus TSDB, recordings) go here. */
  dataDir: string;
  root: string;
}
