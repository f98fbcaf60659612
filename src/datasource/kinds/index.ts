/**
 * Every query kind of Hopscope's data source, once. The Overview's kinds are here, in the Overview's chunk (ready at
 * once on the page the app opens on); every other kind is in `otherKinds.ts`, which travels with the other pages'
 * code (their chunk) and is handed to the data source when it registers. Adding a kind is one file in this folder and
 * one line in `otherKinds.ts` (docs/DEVELOPING.md, "A new data source query kind"); the query types follow (query.ts).
 */
import { annotations } from './annotations';
import { golden } from './golden';
import { heatmap } from './heatmap';
import type { OtherKinds } from './otherKinds';
import { runs } from './runs';
import { services } from './services';

/** The Overview's (its run selector lists and marks the runs, `runs`, too). */
export const OVERVIEW_KINDS = { golden, heatmap, annotations, services, runs };

export type QueryKinds = typeof OVERVIEW_KINDS & OtherKinds;

// The query types (query.ts) read the registry from here.
declare module '../query' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface QueryKindRegistry extends QueryKinds {}
}
