/**
 * Loader for Nezha's TrainTicket cases (IntelligentDDS/Nezha, `rca_data/2023-01-29|30`): 45 labelled faults on a
 * Java system of ~25 Spring services, a different system from the Online Boutique fixture, held out from tuning.
 * The raw traces (~90 MB of CSV) are read from a snapshot of the repository — a git directory (`git show`) or a
 * checkout — found at `NEZHA_REPO`, else `../.mirror/IntelligentDDS+Nezha/repo` beside this repository; a trimmed
 * sample is committed under `tests/fixtures/rca/nezha-tt/` in the same layout for the unit tests.
 *
 * The CSV has no span kind. `withJavaAgentKinds` puts back the kinds the OpenTelemetry Java agent gave these spans
 * (its HTTP client spans are named `HTTP <METHOD>`; the span under one, on another pod, is the callee's server span;
 * the gateway's root is a server span; RabbitMQ sends are producers); the rows as read carry no kind, which is the
 * "kind-less" shape.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Span } from '../../../contract';
import { groupByTrace } from '../../../backend-proxy/src/rca/baseline';
import { parseNezhaRows, serviceOfPod } from './nezha';

/** The snapshot the benchmark was measured on (the Online Boutique fixture's too). */
export const NEZHA_COMMIT = 'd8140101fdb4e7dfb60d3ef9f64706f382b68470';
export const TRAIN_TICKET_DAYS = ['2023-01-29', '2023-01-30'] as const;
/** The fault-free minute Nezha ships per day (`construct_data/<day>/trace/`). */
const FAULT_FREE: Record<string, string> = { '2023-01-29': '08_50', '2023-01-30': '11_39' };

export interface TrainTicketCase {
  id: string;
  day: string;
  /** Injection instant, epoch ms, from the `inject_time` string read as UTC (what the trace clocks agree with). */
  injectMs: number;
  injectPod: string;
  injectType: string;
  rootCauseService: string;
  /** The minute files of the window: the injection minute and the two after it. */
  minutes: string[];
}

/** Where the data is read from: a path relative to the Nezha repository's root → its bytes (undefined: absent). */
export interface NezhaSource {
  name: string;
  read(path: string): Buffer | undefined;
}

/** A Nezha snapshot: a checkout (`rca_data/` on disk) or a bare git directory read at `NEZHA_COMMIT`. */
export function nezhaRepoSource(dir: string): NezhaSource | undefined {
  if (existsSync(join(dir, 'rca_data'))) {
    return { name: dir, read: (p) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p)) : undefined) };
  }
  if (!existsSync(join(dir, 'HEAD')) || !existsSync(join(dir, 'objects'))) return undefined;
  const read = (p: string): Buffer | undefined => {
    try {
      return execFileSync('git', ['--git-dir', dir, 'show', `${NEZHA_COMMIT}:${p}`], {
        maxBuffer: 256 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch {
      return undefined;
    }
  };
  return read('rca_data/2023-01-29/2023-01-29-fault_list.json')
    ? { name: `${dir} @ ${NEZHA_COMMIT.slice(0, 8)}`, read }
    : undefined;
}

/** The snapshot named by `NEZHA_REPO`, else the mirror beside this repository; undefined with why when there is none. */
export function findNezhaRepo(): { source?: NezhaSource; why: string } {
  const dir = process.env.NEZHA_REPO ?? join(import.meta.dirname, '../../../../.mirror/IntelligentDDS+Nezha/repo');
  const source = nezhaRepoSource(dir);
  return source
    ? { source, why: '' }
    : {
        why: `no snapshot of IntelligentDDS/Nezha at ${dir} (at commit ${NEZHA_COMMIT.slice(0, 8)}): set NEZHA_REPO to a clone or a git directory of it`,
      };
}

/** The committed sample (`tests/fixtures/rca/nezha-tt/`): the repository's layout, CSVs gzip'ed. */
export function nezhaSampleSource(dir = join(import.meta.dirname, '../../fixtures/rca/nezha-tt')): NezhaSource {
  return {
    name: dir,
    read: (p) => {
      if (existsSync(join(dir, `${p}.gz`))) return gunzipSync(readFileSync(join(dir, `${p}.gz`)));
      return existsSync(join(dir, p)) ? readFileSync(join(dir, p)) : undefined;
    },
  };
}

const need = (src: NezhaSource, p: string): Buffer => {
  const b = src.read(p);
  if (!b) throw new Error(`${src.name}: no ${p}`);
  return b;
};

const minuteAfter = (hhmm: string, k: number): string => {
  const [h, m] = hhmm.split('_').map(Number);
  const t = h * 60 + m + k;
  return `${String(Math.floor(t / 60)).padStart(2, '0')}_${String(t % 60).padStart(2, '0')}`;
};

/** Every labelled case of the days given, in injection order. */
export function loadTrainTicketCases(src: NezhaSource, days: readonly string[] = TRAIN_TICKET_DAYS): TrainTicketCase[] {
  const out: TrainTicketCase[] = [];
  for (const day of days) {
    const byHour = JSON.parse(need(src, `rca_data/${day}/${day}-fault_list.json`).toString('utf8')) as Record<
      string,
      Array<Record<string, string>>
    >;
    for (const list of Object.values(byHour)) {
      for (const c of list) {
        const injectMs = Date.parse(`${c.inject_time.replace(' ', 'T')}Z`);
        if (!Number.isFinite(injectMs)) throw new Error(`${day} fault list: bad inject_time ${c.inject_time}`);
        const first = c.inject_time.slice(11, 16).replace(':', '_');
        out.push({
          id: `${c.inject_time.replace(/[ :]/g, '_')}_${c.inject_type}_${serviceOfPod(c.inject_pod)}`,
          day,
          injectMs,
          injectPod: c.inject_pod,
          injectType: c.inject_type,
          rootCauseService: serviceOfPod(c.inject_pod),
          minutes: [0, 1, 2].map((k) => minuteAfter(first, k)),
        });
      }
    }
  }
  return out.sort((a, b) => a.injectMs - b.injectMs);
}

/** Faults that slow requests down (the others, `return` and `exception`, change answers: the CSV has no status). */
export const isLatencyFault = (c: Pick<TrainTicketCase, 'injectType'>): boolean =>
  c.injectType === 'cpu_contention' || c.injectType === 'network_delay';

function minuteSpans(src: NezhaSource, path: string): Span[] {
  const b = src.read(path);
  return b ? parseNezhaRows(b.toString('utf8'), path) : [];
}

/** The incident window, kind-less as the CSV says it: traces whose root starts within [inject, inject + windowMs). */
export function trainTicketWindow(src: NezhaSource, c: TrainTicketCase, windowMs = 120_000): Span[][] {
  const spans = c.minutes.flatMap((m) => minuteSpans(src, `rca_data/${c.day}/trace/${m}_trace.csv`));
  return groupByTrace(spans).filter((tr) => {
    const t0 = Math.min(...tr.map((s) => s.startMs));
    return t0 >= c.injectMs && t0 < c.injectMs + windowMs;
  });
}

/** The day's fault-free minute, kind-less, grouped by trace. */
export function trainTicketFaultFree(src: NezhaSource, day: string): Span[][] {
  return groupByTrace(minuteSpans(src, `construct_data/${day}/trace/${FAULT_FREE[day]}_trace.csv`));
}

const HTTP_CLIENT = /^HTTP [A-Z]+$/;
/** RabbitMQ, as the agent names it: `<exchange> send` on the producer, `<queue> process` on the consumer. */
const MQ_SEND = /^\S+ send$/;
const MQ_PROCESS = /^\S+ (?:process|receive)$/;

/**
 * The kinds the OpenTelemetry Java agent gave these spans: its HTTP client spans (`HTTP <METHOD>`) are clients, the
 * span under one on another pod is the callee's server span, a trace's root (the gateway's `/*`) is a server span;
 * RabbitMQ's `<exchange> send` is a producer and the `<queue> process` under it on another pod its consumer; the rest
 * (controllers, repositories, JDBC statements, whose database host the CSV does not name) internal.
 * Returns new spans; the input is left as is.
 */
export function withJavaAgentKinds(trace: Span[]): Span[] {
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const podOf = (s: Span): unknown => s.resource['k8s.pod.name'];
  return trace.map((s) => {
    const p = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId);
    const remote = p !== undefined && podOf(p) !== podOf(s);
    let kind: Span['kind'] = 'internal';
    if (HTTP_CLIENT.test(s.name)) kind = 'client';
    else if (MQ_SEND.test(s.name)) kind = 'producer';
    else if (remote && MQ_SEND.test(p.name) && MQ_PROCESS.test(s.name)) kind = 'consumer';
    else if (!p || (remote && HTTP_CLIENT.test(p.name))) kind = 'server';
    return { ...s, kind };
  });
}
