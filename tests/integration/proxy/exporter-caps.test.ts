/**
 * The proxy asks a real bpf-exporter (replay mode) for more than its caps allow — a week of events, 100,000 of them,
 * as the alerts and export paths do — and still gets events back, marked truncated, instead of the exporter's 400.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { ExporterSource, EXPORTER_MAX_EVENTS } from '../../../backend-proxy/src/sources/exporters';
import type { KernelEvent } from '../../../contract';

let dir = '';
let exporter: Exporter;
const now = Date.now();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-caps-'));
  const lines = Array.from({ length: 20 }, (_, i): KernelEvent => ({
    ts: now - 60_000 + i * 1000,
    type: 'tcp_retransmit',
    pid: 10,
    comm: 'rag',
    pod: 'rag-0',
    detail: {},
    mode: 'live',
  }));
  writeFileSync(join(dir, 'rec.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  exporter = await startExporter(
    loadConfig({
      HOPSCOPE_BPF_PORT: '0',
      HOPSCOPE_BPF_REPLAY: join(dir, 'rec.jsonl'),
      HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
    }),
    pino({ level: 'silent' })
  );
});
after(async () => {
  await exporter?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('over-cap limit and range are clipped to the exporter caps and reported as truncated', async () => {
  const src = new ExporterSource(exporter.url, 5000);
  const wide = await src.events({ from: now - 7 * 86_400_000, to: now + 1000, limit: 10 * EXPORTER_MAX_EVENTS });
  assert.equal(wide.events.length, 20);
  assert.ok(
    wide.events.every((e) => e.mode === 'replay'),
    'replayed events stay marked replay'
  );
  assert.equal(wide.truncated, true);
  const narrow = await src.events({ from: now - 120_000, to: now + 1000, limit: 100 });
  assert.equal(narrow.events.length, 20);
  assert.equal(narrow.truncated, false);
});
