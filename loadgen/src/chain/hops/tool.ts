/** `tool`: the "external API" the agent calls (over TLS by default): a web-search-like answer after a network-ish delay. */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { hashFraction } from '../../shared/random';
import { fillerText } from '../../shared/text';
import { sleep } from '../util';

export function toolRoutes(env: HopEnv): Routes {
  const search = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const q = req.body?.q;
    if (typeof q !== 'string' || !q) throw new HopError(400, 'validation', 'q must be a non-empty string');
    span.setAttribute('hopscope.tool.name', 'web_search');
    await sleep(env.scale(20 + 15 * env.rand()));
    const f = hashFraction(q);
    sendJson(res, 200, {
      results: Array.from({ length: 3 }, (_, i) => ({
        title: `result ${i + 1}`,
        snippet: fillerText(30, Math.floor(f * 1e6) + i),
      })),
    });
  };
  return { 'POST /v1/search': search };
}
