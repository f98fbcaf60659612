/** The one zod error formatter: one `path: message` per issue, readable paths, a bounded message. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { AlertRules, formatZodError, formatZodIssue } from '../../../contract';

test('every issue once, with its path (array indices in brackets), joined by "; "', () => {
  const r = AlertRules.safeParse({
    rules: [{ id: 'ok', name: 'n', conditions: [{ kind: 'kernel', type: 'nope' }], withinMs: -1 }],
  });
  assert.ok(!r.success);
  const msg = formatZodError(r.error);
  const parts = msg.split('; ');
  assert.equal(parts.length, r.error.issues.length);
  assert.ok(
    parts.some((p) => p.startsWith('rules[0].conditions[0].type: ')),
    msg
  );
  assert.ok(
    parts.some((p) => p.startsWith('rules[0].withinMs: ')),
    msg
  );
});

test('an issue of the value itself is named by `root`; past `max`, the rest are counted', () => {
  const top = z.object({ a: z.string() }).safeParse(7);
  assert.ok(!top.success);
  assert.match(formatZodError(top.error, { root: 'body' }), /^body: /);
  assert.match(formatZodError(top.error), /^\(top\): /);
  const many = z.array(z.string()).safeParse([1, 2, 3, 4]);
  assert.ok(!many.success);
  const msg = formatZodError(many.error, { max: 2 });
  assert.match(msg, /^\[0\]: .+; \[1\]: .+; and 2 more$/);
});

test('formatZodIssue is one piece of formatZodError, for messages that put each issue on its own line', () => {
  const r = z.object({ a: z.object({ b: z.array(z.number()) }) }).safeParse({ a: { b: ['x'] } });
  assert.ok(!r.success);
  assert.equal(formatZodIssue(r.error.issues[0]), formatZodError(r.error));
  assert.match(formatZodIssue(r.error.issues[0]), /^a\.b\[0\]: /);
  assert.equal(formatZodIssue({ path: [], message: 'm' }, '(config)'), '(config): m');
});
