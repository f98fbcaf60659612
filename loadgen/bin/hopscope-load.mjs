#!/usr/bin/env node
// `npx hopscope-load`: loads the TypeScript CLI through tsx (the repo runs TypeScript without a build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exit(await main(process.argv.slice(2)));
