/**
 * The services' refusals (backend-proxy/src/domain/errors.ts) as the HTTP layer answers them (http/errors.ts
 * httpErrorOf and the error handler): each kind's status and code, the error's own code where it gives one, its
 * details in the body, Retry-After from retryAfterS (whole seconds, at least 1).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import express from 'express';
import {
  busy,
  databaseUnavailable,
  DomainError,
  invalid,
  notFound,
  stopping,
  upstream,
  type DomainErrorKind,
} from '../../../backend-proxy/src/domain/errors';
import { errorHandler, httpErrorOf } from '../../../backend-proxy/src/http/errors';

test('each kind maps to its status and code', () => {
  const want: Record<DomainErrorKind, [number, string]> = {
    invalid: [400, 'bad_request'],
    not_found: [404, 'not_found'],
    conflict: [409, 'conflict'],
    too_large: [413, 'payload_too_large'],
    unsupported: [415, 'unsupported_media_type'],
    not_implemented: [501, 'not_implemented'],
    upstream: [502, 'source_unavailable'],
    unavailable: [503, 'unavailable'],
    busy: [503, 'overloaded'],
  };
  for (const [kind, [status, code]] of Object.entries(want)) {
    const h = httpErrorOf(new DomainError(kind as DomainErrorKind, 'm'));
    assert.deepEqual([h.status, h.code, h.message, h.headers], [status, code, 'm', undefined], kind);
  }
  assert.equal(httpErrorOf(invalid('x')).status, 400);
  assert.equal(httpErrorOf(notFound('x')).status, 404);
  assert.deepEqual([httpErrorOf(stopping()).status, httpErrorOf(stopping()).code], [503, 'stopping']);
  assert.equal(httpErrorOf(upstream('x', 'render_failed')).code, 'render_failed');
  assert.deepEqual(httpErrorOf(busy('full', 5)).headers, { 'Retry-After': '5' });
  assert.deepEqual(httpErrorOf(databaseUnavailable('down', 0.2)).headers, { 'Retry-After': '1' });
  assert.deepEqual(httpErrorOf(databaseUnavailable('down', 2.5)).headers, { 'Retry-After': '3' });
});

test('the error handler answers a service refusal with its status, body and Retry-After', async () => {
  const app = express();
  app.get('/db', () => {
    throw databaseUnavailable('the database is down; retry in 2 s', 2);
  });
  app.get('/conflict', () => {
    throw new DomainError('conflict', 'another save came first', {
      details: { expectedVersion: 1, currentVersion: 2 },
    });
  });
  app.use(errorHandler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const db = await fetch(`${base}/db`);
    assert.equal(db.status, 503);
    assert.equal(db.headers.get('retry-after'), '2');
    assert.deepEqual(await db.json(), {
      error: {
        code: 'database_unavailable',
        message: 'the database is down; retry in 2 s',
        details: { retryAfterS: 2 },
      },
    });
    const c = await fetch(`${base}/conflict`);
    assert.equal(c.status, 409);
    assert.equal(c.headers.get('retry-after'), null);
    assert.deepEqual(await c.json(), {
      error: {
        code: 'conflict',
        message: 'another save came first',
        details: { expectedVersion: 1, currentVersion: 2 },
      },
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
});
