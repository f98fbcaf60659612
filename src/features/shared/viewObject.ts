/**
 * Base of every view body: a scene object that loads its sections from the proxy whenever the time range or a
 * variable changes (the refresh picker re-evaluates the range), each section with its own loading / ok / error state so
 * one failed source degrades one panel, never the page. Stale answers (an older range) are dropped.
 */
import { SceneObjectBase, VariableDependencyConfig, sceneGraph, type SceneObject, type SceneObjectState } from '@grafana/scenes';

import type { ApiError, ApiResult } from '../../api/client';

export type Section<T> =
  | { status: 'idle' }
  | { status: 'loading'; data?: T }
  | { status: 'ok'; data: T }
  | { status: 'error'; error: ApiError };

export interface ViewState extends SceneObjectState {
  sections: Record<string, Section<unknown>>;
}

export interface QueryContext {
  from: number;
  to: number;
  backend?: string;
  model?: string;
  service?: string;
}

const VARIABLES = ['backend', 'model', 'service'];

/** The value of a scene variable as a filter: undefined for All or empty. */
export function variableFilter(model: SceneObject, name: string): string | undefined {
  const v = sceneGraph.lookupVariable(name, model);
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

export abstract class ViewObject<S extends ViewState> extends SceneObjectBase<S> {
  private generation = 0;

  protected override _variableDependency = new VariableDependencyConfig(this, {
    variableNames: VARIABLES,
    onReferencedVariableValueChanged: () => this.refresh(),
  });

  constructor(state: S) {
    super(state);
    this.addActivationHandler(() => {
      this.refresh();
      const sub = sceneGraph.getTimeRange(this).subscribeToState((next, prev) => {
        if (next.value !== prev.value) {
          this.refresh();
        }
      });
      return () => sub.unsubscribe();
    });
  }

  /** The time range (absolute ms) and variable filters the sections query with. */
  public queryContext(): QueryContext {
    const range = sceneGraph.getTimeRange(this).state.value;
    return {
      from: range.from.valueOf(),
      to: range.to.valueOf(),
      backend: variableFilter(this, 'backend'),
      model: variableFilter(this, 'model'),
      service: variableFilter(this, 'service'),
    };
  }

  /** Loads every section again (time range, variables or URL state changed). */
  public refresh(): void {
    this.generation++;
    this.load(this.queryContext());
  }

  /** Subclasses start their sections here, each with `this.section(name, promise)`. */
  protected abstract load(ctx: QueryContext): void;

  protected section<T>(name: string, promise: Promise<ApiResult<T>>): void {
    const gen = this.generation;
    const prev = this.state.sections[name];
    const keep = prev && prev.status === 'ok' ? prev.data : undefined;
    this.setSections({ [name]: { status: 'loading', data: keep } });
    promise.then((res) => {
      if (gen !== this.generation || !this.isActive) {
        return;
      }
      this.setSections({ [name]: res.ok ? { status: 'ok', data: res.data } : { status: 'error', error: res.error } });
    });
  }

  protected setSections(patch: Record<string, Section<unknown>>): void {
    this.setState({ sections: { ...this.state.sections, ...patch } } as Partial<S>);
  }

  public get<T>(name: string): Section<T> {
    return (this.state.sections[name] as Section<T>) ?? { status: 'idle' };
  }
}
