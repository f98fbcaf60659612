/** Registers Hopscope's runtime data source once (Grafana and Scenes refuse a second registration of one uid). */
import { sceneUtils, type RuntimeDataSource } from '@grafana/scenes';

import { HopscopeDataSource, type OtherKindsLoader } from './HopscopeDataSource';

let registered = false;

/** @param loadOtherKinds fetches the kinds of the other pages (they travel in those pages' chunk). */
export function registerHopscopeDataSource(loadOtherKinds: OtherKindsLoader): void {
  if (registered) {
    return;
  }
  // Typed queries narrow DataSourceApi's generic (its query editor's props): the registry takes the general type.
  sceneUtils.registerRuntimeDataSource({
    dataSource: new HopscopeDataSource(loadOtherKinds) as unknown as RuntimeDataSource,
  });
  registered = true;
}
