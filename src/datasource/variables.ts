/**
 * Query parameters that name a scene variable (`'$backend'`, `'${model}'`) are resolved against the scene the query
 * came from (Scenes passes it as `scopedVars.__sceneObject`): All or an empty value means "no filter" (undefined),
 * the way the proxy reads a missing parameter. Other strings with `$` are interpolated as Grafana does.
 */
import type { ScopedVars } from '@grafana/data';
import { getTemplateSrv } from '@grafana/runtime';
import { sceneGraph, type SceneObject } from '@grafana/scenes';

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
