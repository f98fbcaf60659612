/**
 * Builds the Grafana app plugin into dist/ the way Grafana's plugin toolchain does: an AMD `module.js` whose shared
 * modules (React, @grafana/data|ui|runtime, …) are left to Grafana, everything else bundled, plus plugin.json (with
 * version and date filled in), README, CHANGELOG, LICENSE, img/ and the dashboards plugin.json `includes` (src/dashboards/).
 * Run with `npm run build` (scripts/build-plugin.ts); `--mode development` for an unminified build.
 */
import CopyWebpackPlugin from 'copy-webpack-plugin';
import { EsbuildPlugin } from 'esbuild-loader';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Configuration } from 'webpack';

const root = import.meta.dirname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const pluginJson = JSON.parse(readFileSync(join(root, 'plugin.json'), 'utf8')) as { id: string };

/** The modules Grafana shares with plugins at runtime (see ../shared/GRAFANA-HOST.md): never bundled. */
export const SHARED_MODULES = [
  'react',
  'react-dom',
  'react/jsx-runtime',
  '@grafana/data',
  '@grafana/ui',
  '@grafana/runtime',
  'rxjs',
  'lodash',
  '@emotion/css',
  '@emotion/react',
  'i18next',
  'react-router',
  'd3',
  'moment',
  'jquery',
  'redux',
] as const;

export function buildConfig(mode: 'production' | 'development' = 'production'): Configuration {
  const production = mode === 'production';
  return {
    mode,
    context: root,
    target: 'web',
    entry: { module: './src/module.tsx' },
    devtool: production ? false : 'eval-source-map',
    // Rebuilds reuse the previous work: the build runs in every CI and every `npm start`.
    // HOPSCOPE_BUILD_CACHE=0 builds from scratch (to measure, or to rule the cache out).
    cache:
      process.env.HOPSCOPE_BUILD_CACHE === '0'
        ? false
        : {
            type: 'filesystem',
            cacheDirectory: join(root, '.cache/webpack'),
            buildDependencies: { config: [join(root, 'webpack.config.ts')] },
          },
    output: {
      path: join(root, 'dist'),
      filename: '[name].js',
      chunkFilename: '[name].[contenthash:8].js',
      library: { type: 'amd' },
      uniqueName: pluginJson.id,
      // Overridden at runtime from the AMD module uri (src/publicPath.ts); this is the fallback.
      publicPath: `public/plugins/${pluginJson.id}/`,
      clean: true,
    },
    externals: [...SHARED_MODULES, { 'amd-module': 'module' }],
    resolve: {
      extensions: ['.tsx', '.ts', '.mjs', '.js', '.json'],
      // Only the ESM builds of the bundled libraries, so unused code is shaken out.
      mainFields: ['browser', 'module', 'main'],
    },
    module: {
      rules: [
        // .ts as TypeScript, .tsx as TSX: a generic arrow function (`<T>(x: T) => x`) in a .ts file is not JSX.
        {
          test: /\.[cm]?ts$/,
          exclude: /node_modules/,
          loader: 'esbuild-loader',
          options: { loader: 'ts', target: 'es2022', tsconfig: join(root, 'tsconfig.json') },
        },
        {
          test: /\.tsx$/,
          exclude: /node_modules/,
          loader: 'esbuild-loader',
          options: { loader: 'tsx', target: 'es2022', jsx: 'automatic', tsconfig: join(root, 'tsconfig.json') },
        },
        // Some ESM packages import without extensions; webpack 5 is strict about that in .mjs.
        { test: /\.m?js$/, resolve: { fullySpecified: false } },
        // @grafana/scenes reads nine of @grafana/e2e-selectors' selectors, but loading that package resolves all of them
        // with `semver` (~10 ms of the Overview's cold load, +27 KiB): scenes gets the same selectors resolved on use.
        {
          test: /[\\/]node_modules[\\/]@grafana[\\/]scenes[\\/]/,
          resolve: { alias: { '@grafana/e2e-selectors$': join(root, 'src/shims/e2eSelectors.ts') } },
        },
      ],
    },
    optimization: {
      // HOPSCOPE_BUILD_MINIFY=0: readable function names in a production build (to profile it).
      minimize: production && process.env.HOPSCOPE_BUILD_MINIFY !== '0',
      minimizer: [new EsbuildPlugin({ target: 'es2020', legalComments: 'none' })],
    },
    performance: { hints: false },
    // @grafana/scenes' PanelBuilders.table() imports a table default that @grafana/schema 12.4 no longer exports; the
    // table panel's own defaults apply instead (Grafana's build prints the same warning for every Scenes app).
    ignoreWarnings: [{ module: /@grafana[\\/]scenes[\\/]/, message: /TablePanelCfg_types\.gen/ }],
    plugins: [
      new CopyWebpackPlugin({
        patterns: [
          {
            from: 'plugin.json',
            to: '.',
            transform: (content) =>
              content
                .toString()
                .replaceAll('%VERSION%', pkg.version)
                .replaceAll('%TODAY%', new Date().toISOString().slice(0, 10)),
          },
          { from: 'README.md', to: '.', noErrorOnMissing: true },
          { from: 'CHANGELOG.md', to: '.', noErrorOnMissing: true },
          ...(existsSync(join(root, 'LICENSE')) ? [{ from: 'LICENSE', to: '.' }] : []),
          { from: 'img', to: 'img' },
          // The golden dashboard, bundled (plugin.json `includes` type dashboard, path `dashboards/…`): Grafana lists it
          // on the app's Dashboards tab, and the Docker stack provisions it from the installed plugin.
          { from: 'src/dashboards', to: 'dashboards' },
        ],
      }),
    ],
    stats: 'errors-warnings',
  };
}

export default buildConfig();
