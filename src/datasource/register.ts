/** Registers Hopscope's runtime data source once (Grafana and Scenes refuse a second registration of one uid). */
import { sceneUtils, type RuntimeDataSource } from '@grafana/scenes';

import { HopscopeDataSource } from './HopscopeDataSource';

let registered = false;

export function registerHopscopeDataSource(): void {
  if (registered) {
    return;
  }
  // Typed queries narrow DataSourceApi's generic (its query editor's props): the registry takes the general type.
  sceneUtils.registerRuntimeDataSource({ dataSource: new HopscopeDataSource() as unknown as RuntimeDataSource });
  registered = true;
}
