/**
 * Query parameters that name a scene variable (`'$backend'`, `'${model}'`) are resolved against the scene the query
 * came from (Scenes passes it as `scopedVars.__sceneObject`): All or an empty value means "no filter" (undefined),
 * the way the proxy reads a missing parameter. Other strings with `$` are interpolated as Grafana does.
 */
import type { DataQueryResponse, MetricFindValue, ScopedVars, TimeRange } from '@grafana/data';
import { getTemplateSrv } from '@grafana/runtime';
import { RuntimeDataSource, sceneGraph, sceneUtils, type SceneObject } from '@grafana/scenes';

import type { GoldenAnswer } from '../../contract';
import { api } from '../api/client';
import { fetchServices } from './kinds/services';

const VARIABLE_REF = /^\$(?:\{(\w+)\}|(\w+))$/;

function sceneObjectOf(scopedVars: ScopedVars | undefined): SceneObject | undefined {
  const wrapped = scopedVars?.__sceneObject?.value as { valueOf(): unknown } | undefined;
  const obj = wrapped?.valueOf();
  return obj && typeof obj === 'object' && 'state' in obj ? (obj as SceneObject) : undefined;
}

/** A variable's value as a filter: undefined for All or empty; several values joined with commas. */
export function variableFilter(scene: SceneObject, name: string): string | undefined {
  const v = sceneGraph.lookupVariable(name, scene);
  if (!v) {
    return undefined;
  }
  if ('hasAllValue' in v && typeof v.hasAllValue === 'function' && v.hasAllValue()) {
    return undefined;
  }
  const value = v.getValue();
  const s = Array.isArray(value) ? value.join(',') : value === null || value === undefined ? '' : String(value);
  return s === '' || s === '$__all' || s === 'All' ? undefined : s;
}

/** Resolves every string parameter of a query; other values pass through. */
export function resolveParams<P extends object>(params: P, scopedVars: ScopedVars | undefined): P {
  const scene = sceneObjectOf(scopedVars);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (typeof value !== 'string' || !value.includes('$')) {
      out[key] = value;
      continue;
    }
    const ref = VARIABLE_REF.exec(value);
    if (ref && scene) {
      out[key] = variableFilter(scene, ref[1] ?? ref[2]);
    } else {
      const s = scene ? sceneGraph.interpolate(scene, value, scopedVars) : getTemplateSrv().replace(value, scopedVars);
      out[key] = s === '' ? undefined : s;
    }
  }
  return out as P;
}

/**
 * The values the `service` and `model` query variables offer, from what exists in the page's window: the traced
 * services (GET /services, the call the Overview's services panel makes, shared in flight) and the models the golden
 * series carry (vLLM's `model_name`, the gateway's `gen_ai_request_model` for TGI, which has no model label of its
 * own), from one coarse GET /golden over the window. A runtime data source of its own with Grafana's variable query
 * API (`metricFindQuery`), so the variables are QueryVariables as on any dashboard; registered next to the panels'
 * data source (components/App/App.tsx).
 */
export const VARIABLE_VALUES_DATASOURCE = {
  uid: 'hopscope-variable-values',
  type: 'hopscope-variable-values',
} as const;

/** The queries of the values data source: one per variable. */
export type VariableValuesQuery = 'services' | 'models';

/** The model label names of the golden series the proxy's `model` filter matches. */
export const MODEL_LABELS = ['model_name', 'gen_ai_request_model'] as const;

/** Distinct model names of golden series, sorted. */
export function modelsOfGolden(answer: Pick<GoldenAnswer, 'series'>): string[] {
  const names = new Set<string>();
  for (const s of answer.series) {
    for (const l of MODEL_LABELS) {
      if (s.labels[l]) {
        names.add(s.labels[l]);
      }
    }
  }
  return [...names].sort();
}

/** A GET /golden for its labels only: ten steps over the window (the model list, not the curves). */
export function modelsGoldenParams(from: number, to: number): { from: number; to: number; step: string } {
  return { from, to, step: `${Math.max(60, Math.ceil((to - from) / 10 / 1000))}s` };
}

export class VariableValuesDataSource extends RuntimeDataSource {
  constructor() {
    super(VARIABLE_VALUES_DATASOURCE.type, VARIABLE_VALUES_DATASOURCE.uid);
  }

  /** Panels never query it. */
  override query(): Promise<DataQueryResponse> {
    return Promise.resolve({ data: [] });
  }

  /** Grafana's variable query API (a QueryVariable's legacy runner calls it with the page's time range). */
  override async metricFindQuery(query: string, options?: { range?: TimeRange }): Promise<MetricFindValue[]> {
    const to = options?.range?.to.valueOf() ?? Date.now();
    const from = options?.range?.from.valueOf() ?? to - 3600_000;
    const toValues = (names: string[]): MetricFindValue[] => names.map((n) => ({ text: n, value: n }));
    if (query === 'services') {
      const res = await fetchServices({ from, to });
      if (!res.ok) {
        throw new Error(`Services: ${res.error.message} (${res.error.code})`);
      }
      return toValues(res.data.services.map((s) => s.service).sort());
    }
    if (query === 'models') {
      const res = await api.golden(modelsGoldenParams(from, to));
      if (!res.ok) {
        throw new Error(`Models: ${res.error.message} (${res.error.code})`);
      }
      return toValues(modelsOfGolden(res.data));
    }
    throw new Error(`Unknown variable query "${query}" (services, models)`);
  }

  override testDatasource(): Promise<{ status: string; message: string }> {
    return Promise.resolve({ status: 'success', message: 'Hopscope variable values (runtime)' });
  }
}

let valuesRegistered = false;

/** Registers the variable values data source once (next to the panels' data source, before any page runs). */
export function registerVariableValuesDataSource(): void {
  if (!valuesRegistered) {
    sceneUtils.registerRuntimeDataSource({ dataSource: new VariableValuesDataSource() });
    valuesRegistered = true;
  }
}
