import { startStack, waitFor } from './support/stack';
import { appUrl } from '../../support/host';
import { launchBrowser, openPage } from '../../support/browser';

const t0 = Date.now();
const stack = await startStack();
console.log('stack up in', Date.now() - t0, 'ms', stack.proxy.url, stack.host.url);
try {
  await new Promise((r) => setTimeout(r, 12000));
  const f = await fetch(`${stack.chain.controlUrl}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 1500, durationS: 120 }) });
  console.log('fault', f.status, await f.text());
  await new Promise((r) => setTimeout(r, 12000));
  for (const p of ['golden?from=now-5m&to=now&step=5000', 'services?from=now-5m&to=now', 'gpu/heatmap?from=now-5m&to=now', 'annotations?from=now-5m&to=now', 'traces?from=now-5m&to=now&minDurationMs=1000']) {
    const r = await fetch(`${stack.proxy.url}/api/${p}`);
    const txt = await r.text();
    console.log(p, r.status, txt.slice(0, 400));
  }
  const browser = await launchBrowser();
  for (const p of ['overview', 'services']) {
    const { page, problems, context } = await openPage(browser, appUrl(stack.host, p, { query: { from: 'now-5m', to: 'now' } }));
    await page.waitForTimeout(3000);
    await page.screenshot({ path: `/tmp/x-${p}.png`, fullPage: true });
    console.log(p, problems.all());
    await context.close();
  }
  await browser.close();
} finally {
  await stack.close();
  console.log('closed');
}
