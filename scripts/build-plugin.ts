/**
 * `npm run build`: builds the Grafana plugin into dist/ with webpack's Node API (config in webpack.config.ts).
 * Usage: tsx scripts/build-plugin.ts [--mode development] [--help]
 */
import webpack from 'webpack';

import { buildConfig } from '../webpack.config';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(
    'Usage: npm run build [-- --mode development]\nBuilds the Grafana app plugin into dist/ (AMD module.js, plugin.json, img/, docs).'
  );
  process.exit(0);
}
const modeIdx = argv.indexOf('--mode');
const mode = modeIdx >= 0 && argv[modeIdx + 1] === 'development' ? 'development' : 'production';

const started = Date.now();
const compiler = webpack(buildConfig(mode));
compiler.run((err, stats) => {
  compiler.close(() => undefined);
  if (err) {
    console.error(err);
    process.exit(1);
  }
  const info = stats?.toJson({ all: false, errors: true, warnings: true });
  if (stats?.hasErrors()) {
    for (const e of info?.errors ?? []) {
      console.error(e.message);
    }
    process.exit(1);
  }
  for (const w of info?.warnings ?? []) {
    console.warn(w.message);
  }
  const assets = Object.entries(stats?.compilation.assets ?? {}).filter(([name]) => name.endsWith('.js'));
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  const list = assets.map(([name, source]) => `${name} ${kb(source.size())}`).join(', ');
  console.log(`built dist/ (${mode}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ${list}`);
});
