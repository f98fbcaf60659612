// Lint for the whole repo (`npm run lint`, zero warnings). The app plugin (src/) follows Grafana's own config
// (@grafana/eslint-config, as plugins made with create-plugin do); everything else — services, tests, scripts —
// gets typescript-eslint's recommended set, relaxed where Node services and tests legitimately differ.
import grafanaConfig from '@grafana/eslint-config';
import prettierConfig from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const srcFiles = ['src/**/*.{ts,tsx}'];
const nodeFiles = ['**/*.{ts,tsx,mts,cts}'];

export default [
  // Other parts may disable a rule that this config already leaves off: not worth a warning.
  { linterOptions: { reportUnusedDisableDirectives: 'off' } },
  {
    ignores: [
      'dist/**',
      '.cache/**',
      'artifacts/**',
      'node_modules/**',
      'coverage/**',
      '**/*.min.js',
      'provisioning/**/*.js',
    ],
  },
  // Everything outside src/: typescript-eslint recommended.
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: nodeFiles, ignores: srcFiles })),
  {
    files: nodeFiles,
    ignores: srcFiles,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-this-alias': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  // Architecture: the four parts talk only through contract/. A part never imports another part's internals, nor test,
  // bench or script code; contract/ imports no part at all.
  ...[
    ['backend-proxy/**/*.ts', ['bpf-exporter', 'loadgen']],
    ['bpf-exporter/**/*.ts', ['backend-proxy', 'loadgen']],
    ['loadgen/**/*.ts', ['backend-proxy', 'bpf-exporter']],
    ['src/**/*.{ts,tsx}', ['backend-proxy', 'bpf-exporter', 'loadgen']],
    ['contract/**/*.ts', ['backend-proxy', 'bpf-exporter', 'loadgen']],
  ].map(([files, others]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          // Grafana's own config forbids moment in plugins; this rule replaces its options, so it is kept here.
          paths: [{ name: 'moment', message: 'Use @grafana/data dateTime helpers instead of moment.' }],
          patterns: [
            {
              group: [...others.map((o) => `**/${o}/**`), '**/tests/**', '**/bench/**', '**/scripts/**'],
              message: 'Parts talk through contract/ only: import the shared schema or helper from contract/ instead.',
            },
          ],
        },
      ],
    },
  })),
  // React code outside src/ (the test host's client): the classic hooks rules.
  {
    files: ['tests/host/client/**/*.tsx', 'tests/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  // The app plugin: Grafana's config.
  ...grafanaConfig.map((c) => ({ ...c, files: srcFiles })),
  {
    files: srcFiles,
    languageOptions: { ecmaVersion: 2022 },
    rules: {
      'react/prop-types': 'off',
      'react/react-in-jsx-scope': 'off',
      // eslint-plugin-react-hooks 7 adds the React Compiler's rules to "recommended"; Grafana's plugins (and this
      // app) do not use the compiler, and its rules reject common idioms (a "latest value" ref written in render).
      // The classic rules stay: rules-of-hooks, exhaustive-deps.
      ...Object.fromEntries(
        Object.keys(reactHooks.configs.flat.recommended.rules)
          .filter((r) => r !== 'react-hooks/rules-of-hooks' && r !== 'react-hooks/exhaustive-deps')
          .map((r) => [r, 'off'])
      ),
    },
  },
  // Plain JS/MJS files (configs, reporters).
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { console: 'readonly', process: 'readonly' } },
  },
  prettierConfig,
];
