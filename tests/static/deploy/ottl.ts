/**
 * A small interpreter for the subset of OTTL (OpenTelemetry Transformation Language) that
 * deploy/otel-collector/config.yaml uses, so a test can run the Collector's `transform/genai` statements on spans and
 * compare with the proxy's enrichment. It refuses anything outside that subset, so the config cannot drift into
 * syntax this check does not understand. Semantics follow the OTTL docs: `set` with a nil value is a no-op,
 * comparisons across types are unequal, a failing converter yields nil, conditions join with `and`.
 */

export type Value = string | number | boolean | null;
export interface SpanData {
  attributes: Record<string, Value>;
  resource: Record<string, Value>;
}

type Node =
  | { t: 'path'; scope: 'attributes' | 'resource' | 'cache'; key: string }
  | { t: 'lit'; v: Value }
  | { t: 'call'; fn: 'String' | 'Int' | 'Double' | 'IsMatch'; args: Node[] }
  | { t: 'add'; a: Node; b: Node }
  | { t: 'cmp'; op: '==' | '!=' | '>=' | '<=' | '>' | '<'; a: Node; b: Node }
  | { t: 'and'; xs: Node[] };

export interface Statement {
  target: Extract<Node, { t: 'path' }>;
  value: Node;
  where?: Node;
  source: string;
}

const TOKEN =
  /\s*(resource\.attributes|attributes|cache|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|==|!=|>=|<=|[()[\],+<>]|[A-Za-z_]\w*)/y;

function tokenize(src: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`OTTL subset: cannot read "${src.slice(at, at + 30)}" in: ${src}`);
    out.push(m[1]);
  }
  return out;
}

export function parseStatement(src: string): Statement {
  const tk = tokenize(src);
  let i = 0;
  const peek = (): string | undefined => tk[i];
  const eat = (want?: string): string => {
    const t = tk[i++];
    if (t === undefined || (want !== undefined && t !== want))
      throw new Error(`OTTL subset: expected ${want ?? 'a token'} at "${t}" in: ${src}`);
    return t;
  };
  const path = (): Extract<Node, { t: 'path' }> => {
    const s = eat();
    if (s !== 'attributes' && s !== 'resource.attributes' && s !== 'cache')
      throw new Error(`OTTL subset: unknown path ${s} in: ${src}`);
    eat('[');
    const key = JSON.parse(eat()) as string;
    eat(']');
    return { t: 'path', scope: s === 'resource.attributes' ? 'resource' : s, key };
  };
  const term = (): Node => {
    const s = peek();
    if (s === undefined) throw new Error(`OTTL subset: unexpected end of: ${src}`);
    if (s === 'attributes' || s === 'resource.attributes' || s === 'cache') return path();
    if (s.startsWith('"')) {
      i++;
      return { t: 'lit', v: JSON.parse(s) as string };
    }
    if (/^-?\d/.test(s)) {
      i++;
      return { t: 'lit', v: Number(s) };
    }
    if (s === 'nil') {
      i++;
      return { t: 'lit', v: null };
    }
    if (s === 'true' || s === 'false') {
      i++;
      return { t: 'lit', v: s === 'true' };
    }
    if (s === 'String' || s === 'Int' || s === 'Double' || s === 'IsMatch') {
      i++;
      eat('(');
      const args = [value()];
      while (peek() === ',') {
        i++;
        args.push(value());
      }
      eat(')');
      return { t: 'call', fn: s, args };
    }
    if (s === '(') {
      i++;
      const e = cond();
      eat(')');
      return e;
    }
    throw new Error(`OTTL subset: "${s}" is not supported by this check, in: ${src}`);
  };
  const value = (): Node => {
    let a = term();
    while (peek() === '+') {
      i++;
      a = { t: 'add', a, b: term() };
    }
    return a;
  };
  const cmp = (): Node => {
    const a = value();
    const op = peek();
    if (op === '==' || op === '!=' || op === '>=' || op === '<=' || op === '>' || op === '<') {
      i++;
      return { t: 'cmp', op, a, b: value() };
    }
    return a;
  };
  const cond = (): Node => {
    const xs = [cmp()];
    while (peek() === 'and') {
      i++;
      xs.push(cmp());
    }
    if (peek() === 'or' || peek() === 'not')
      throw new Error(`OTTL subset: "${peek()}" is not supported by this check, in: ${src}`);
    return xs.length === 1 ? xs[0] : { t: 'and', xs };
  };
  eat('set');
  eat('(');
  const target = path();
  eat(',');
  const v = value();
  eat(')');
  let where: Node | undefined;
  if (peek() === 'where') {
    i++;
    where = cond();
  }
  if (i !== tk.length) throw new Error(`OTTL subset: trailing "${tk.slice(i).join(' ')}" in: ${src}`);
  return { target, value: v, where, source: src };
}

const FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function evaluate(n: Node, span: SpanData, cache: Record<string, Value>): Value {
  switch (n.t) {
    case 'lit':
      return n.v;
    case 'path': {
      const m = n.scope === 'attributes' ? span.attributes : n.scope === 'resource' ? span.resource : cache;
      return m[n.key] ?? null;
    }
    case 'add': {
      const a = evaluate(n.a, span, cache);
      const b = evaluate(n.b, span, cache);
      return typeof a === 'number' && typeof b === 'number' ? a + b : null;
    }
    case 'call': {
      const a = evaluate(n.args[0], span, cache);
      if (n.fn === 'IsMatch') {
        const re = evaluate(n.args[1], span, cache) as string;
        if (a === null) return false;
        const ci = re.startsWith('(?i)');
        return new RegExp(ci ? re.slice(4) : re, ci ? 'i' : '').test(String(a));
      }
      if (a === null) return null;
      if (n.fn === 'String') return typeof a === 'string' ? a : String(a);
      if (n.fn === 'Double') {
        if (typeof a === 'number') return a;
        if (typeof a === 'boolean') return a ? 1 : 0;
        return FLOAT.test(a) ? Number(a) : null;
      }
      // Int: floats truncate toward zero, like Go's int64(float64).
      if (typeof a === 'number') return Math.trunc(a);
      if (typeof a === 'boolean') return a ? 1 : 0;
      return /^[+-]?\d+$/.test(a) ? Number(a) : null;
    }
    case 'cmp': {
      const a = evaluate(n.a, span, cache);
      const b = evaluate(n.b, span, cache);
      if (n.op === '==') return a === b;
      if (n.op === '!=') return a !== b;
      if (typeof a !== 'number' || typeof b !== 'number') return false;
      return n.op === '>=' ? a >= b : n.op === '<=' ? a <= b : n.op === '>' ? a > b : a < b;
    }
    case 'and':
      return n.xs.every((x) => evaluate(x, span, cache) === true);
  }
}

/** Runs the statements in order on one span (a fresh cache per span, as the transform processor does); mutates it. */
export function runStatements(statements: Statement[], span: SpanData): SpanData {
  const cache: Record<string, Value> = {};
  for (const s of statements) {
    if (s.where && evaluate(s.where, span, cache) !== true) continue;
    const v = evaluate(s.value, span, cache);
    if (v === null) continue;
    const m = s.target.scope === 'attributes' ? span.attributes : s.target.scope === 'resource' ? span.resource : cache;
    m[s.target.key] = v;
  }
  return span;
}
