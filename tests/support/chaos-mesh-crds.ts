/**
 * Chaos Mesh's own CRD schemas (v2.8.3, tests/fixtures/chaos-mesh/*.json, each naming its release, commit and path)
 * as ajv validators. The API server prunes or, with strict field validation, refuses fields a structural schema does
 * not declare; so does this: every object schema with `properties` and no `additionalProperties` gets
 * `additionalProperties: false` (metadata excepted: the API server validates it itself). `x-kubernetes-*` keywords
 * are annotations here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';

const FILES = ['networkchaos', 'httpchaos', 'stresschaos', 'podchaos'];

export interface CrdFixture {
  source: { release: string; commit: string; path: string };
  kind: string;
  plural: string;
  openAPIV3Schema: Record<string, unknown>;
}

export const crdFixture = (name: string): CrdFixture =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/chaos-mesh', `${name}.json`), 'utf8')) as CrdFixture;

function strict(schema: any, path: string[] = []): any {
  if (!schema || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((s) => strict(s, path));
  const out: any = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(v as object).map(([p, s]) => [
          p,
          p === 'metadata' && path.length === 0 ? s : strict(s, [...path, p]),
        ])
      );
    } else out[k] = strict(v, path);
  }
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

/** Kind → a validator returning undefined when valid, else the errors in one line (`/spec/mode must be equal to …`). */
export function chaosMeshValidators(): Record<string, (doc: unknown) => string | undefined> {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const out: Record<string, (doc: unknown) => string | undefined> = {};
  for (const f of FILES) {
    const crd = crdFixture(f);
    const check = ajv.compile(strict(crd.openAPIV3Schema));
    out[crd.kind] = (doc) =>
      check(doc) ? undefined : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
  }
  return out;
}
