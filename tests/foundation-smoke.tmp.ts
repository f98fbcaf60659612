import { launchBrowser } from './support/browser';
import { startTestHost, appUrl, configUrl } from './support/host';
const host = await startTestHost();
const b = await launchBrowser();
for (const [name, url] of [['overview-dark', appUrl(host)], ['traces-light', appUrl(host, 'traces', { theme: 'light' })], ['config-dark', configUrl(host)]]) {
  const page = await b.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => { if (m.type() !== 'info') console.log('console', m.type(), m.text().slice(0, 400)); });
  page.on('pageerror', (e) => console.log('pageerror', e.message, e.stack?.slice(0, 600)));
  page.on('response', (r) => { if (r.status() >= 400) console.log('resp', r.status(), r.url()); });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForTimeout(3000);
  console.log(name, await page.evaluate(() => document.body.dataset.hostState), page.url());
  await page.screenshot({ path: `/tmp/foundation-${name}.png` });
  await page.close();
}
await b.close();
await host.close();
