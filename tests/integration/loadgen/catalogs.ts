/** The real exporters' metric catalogs, read from the shared fixtures (../shared/fixtures/metrics, read-only). */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { fixture } from '../../support/fixtures';

export const fixtures = fixture;

export interface CatalogEntry {
  type: string;
  note: string;
}

/** vLLM: exposed_name → type (from metrics-catalog.tsv; rows like "a / b" expand to several names). */
export function vllmCatalog(): Map<string, CatalogEntry> {
  const out = new Map<string, CatalogEntry>();
  for (const line of readFileSync(fixtures('metrics', 'vllm', 'metrics-catalog.tsv'), 'utf8').split('\n')) {
    if (!line.startsWith('vllm:')) continue;
    const [name, type, , note] = line.split('\t');
    out.set(name.trim(), { type, note: note ?? '' });
  }
  return out;
}

/** TGI: name → type; a "histogram->SUMMARY" row is exposed as a summary. */
export function tgiCatalog(): Map<string, CatalogEntry> {
  const out = new Map<string, CatalogEntry>();
  for (const line of readFileSync(fixtures('metrics', 'tgi', 'metric-catalog-from-source.tsv'), 'utf8').split('\n')) {
    if (!line.startsWith('tgi_')) continue;
    const [name, type, , labels, buckets] = line.split('\t');
    out.set(name, { type: type.includes('SUMMARY') ? 'summary' : type, note: `${labels} ${buckets ?? ''}` });
  }
  return out;
}

/** The TGI duration buckets as the catalog lists them. */
export function tgiDurationBuckets(): number[] {
  const text = readFileSync(fixtures('metrics', 'tgi', 'metric-catalog-from-source.tsv'), 'utf8');
  const m = /k=1\.\.35 =\n# ([\s\S]*?)\(\+Inf\)/.exec(text);
  return (m?.[1] ?? '')
    .replace(/#/g, '')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isFinite(n) && n > 0);
}

/** vLLM histogram buckets as the catalog lists them (for the named histogram). */
export function vllmBuckets(name: string): number[] {
  const line = readFileSync(fixtures('metrics', 'vllm', 'metrics-catalog.tsv'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}\t`))!;
  return line
    .split('\t')[3]
    .split(/[\s,]+/)
    .map(Number)
    .filter((n) => Number.isFinite(n) && n > 0);
}

/** DCGM: field → type from both CSVs, including commented-out fields (e.g. DCGM_FI_PROF_SM_ACTIVE, off by default). */
export function dcgmCatalog(): Map<string, CatalogEntry & { commentedOut: boolean }> {
  const out = new Map<string, CatalogEntry & { commentedOut: boolean }>();
  for (const f of ['default-counters.csv', 'dcp-metrics-included.csv']) {
    for (const raw of readFileSync(fixtures('metrics', 'dcgm', f), 'utf8').split('\n')) {
      const m = /^(#\s*)?(DCGM_FI_[A-Z0-9_]+)\s*,\s*([a-z]+)\s*,/.exec(raw.trim());
      if (!m) continue;
      const prev = out.get(m[2]);
      out.set(m[2], { type: m[3], note: '', commentedOut: Boolean(m[1]) && (prev?.commentedOut ?? true) });
    }
  }
  return out;
}

/** GenAI semconv metrics, as the OTel → Prometheus translation names them: dots → _, unit s → _seconds. */
export function genAiPrometheusNames(): Map<string, string> {
  const y = parseYaml(readFileSync(fixtures('semconv-genai', 'model', 'gen-ai', 'metrics.yaml'), 'utf8')) as {
    groups: Array<{ metric_name?: string; instrument?: string; unit?: string }>;
  };
  const out = new Map<string, string>();
  for (const g of y.groups) {
    if (!g.metric_name) continue;
    const base = g.metric_name.replace(/\./g, '_');
    const name = g.unit === 's' ? `${base}_seconds` : base;
    out.set(name, g.instrument ?? '');
  }
  return out;
}
