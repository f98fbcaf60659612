// Grafana loads module.js with SystemJS's AMD extra and hands it the AMD `module` object: its `uri` is where this
// plugin is served from. Lazy chunks must load from the same place, wherever Grafana mounts the plugin (sub-path,
// CDN), so the public path is set at runtime from it — the same trick Grafana's create-plugin template uses.
import amdModule from 'amd-module';

__webpack_public_path__ =
  amdModule && amdModule.uri
    ? amdModule.uri.slice(0, amdModule.uri.lastIndexOf('/') + 1)
    : 'public/plugins/hopscope-rca-app/';
