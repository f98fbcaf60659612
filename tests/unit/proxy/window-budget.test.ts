/**
 * The global budget of window work (backend-proxy/src/services/window-budget.ts): answers at once, traces reserved
 * together, bytes held together; past the first two a 503 with Retry-After and a message naming the setting, past
 * the bytes a reader that stops; everything given back on release (once).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../../backend-proxy/src/domain/errors';
import { WindowBudget } from '../../../backend-proxy/src/services/window-budget';

const refused = (fn: () => unknown, setting: RegExp): void =>
  assert.throws(fn, (e: unknown) => {
    // A busy domain error: the HTTP layer answers it 503 `overloaded` with Retry-After (http/errors.ts).
    assert.ok(e instanceof DomainError);
    assert.equal(e.kind, 'busy');
    assert.equal(e.code, 'overloaded');
    assert.equal(e.retryAfterS, 5);
    assert.match(e.message, setting);
    return true;
  });

test('past the answers held at once: 503 + Retry-After naming HOPSCOPE_WINDOW_MAX_CONCURRENT; a release admits again', () => {
  const b = new WindowBudget({ windows: 2, traces: 100 });
  const t1 = b.admit('GET /api/rca', 10);
  const t2 = b.admit('GET /api/rca', 10);
  refused(() => b.admit('GET /api/rca', 10), /2 window answers already.*HOPSCOPE_WINDOW_MAX_CONCURRENT/);
  t1.release();
  t1.release(); // idempotent: gives back once
  assert.deepEqual(b.held(), { windows: 1, traces: 10, bytes: 0 });
  b.admit('run compare', 10).release();
  t2.release();
  assert.deepEqual(b.held(), { windows: 0, traces: 0, bytes: 0 });
});

test('past the traces reserved together: 503 naming HOPSCOPE_WINDOW_MAX_TRACES; one window alone is always admitted', () => {
  const b = new WindowBudget({ windows: 10, traces: 1000 });
  const big = b.admit('run compare', 4000); // alone: admitted whatever it reserves (its own cap bounds it)
  refused(() => b.admit('GET /api/rca', 1), /hold 4000 traces.*HOPSCOPE_WINDOW_MAX_TRACES/);
  big.release();
  const a = b.admit('GET /api/rca', 600);
  refused(() => b.admit('GET /api/rca', 500), /HOPSCOPE_WINDOW_MAX_TRACES/);
  const c = b.admit('GET /api/rca', 400);
  assert.equal(b.held().traces, 1000);
  a.release();
  c.release();
});

test('bytes: a reader past the budget is told to stop (its first trace always held); held bytes refuse new windows', () => {
  const b = new WindowBudget({ bytes: 1000 });
  const t1 = b.admit('GET /api/rca', 10);
  const t2 = b.admit('GET /api/rca', 10);
  assert.equal(t1.hold(1500), true, 'the first trace of a window is held whatever its size');
  refused(() => b.admit('GET /api/rca', 10), /about 0 MiB of spans.*HOPSCOPE_WINDOW_MAX_BYTES/);
  assert.equal(t2.hold(100), true);
  assert.equal(t2.hold(100), false, 'past the budget: no more');
  assert.equal(t2.hold(100, true), true, 'data read already is counted anyway');
  assert.equal(b.held().bytes, 1700);
  t1.release();
  t2.release();
  assert.deepEqual(b.held(), { windows: 0, traces: 0, bytes: 0 });
  assert.equal(t2.hold(1), false, 'a released ticket holds nothing');
});
