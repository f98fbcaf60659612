/**
 * A run's metricsUrl cannot steer Prometheus (finding 3 of issue 20): http(s) to the registering worker's own address
 * or an allowed host only, no query (no __param_*), no credentials; the SD job keeps the proxy's run labels.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { RunsError } from '../../../backend-proxy/src/runs/errors';
import { checkMetricsUrl } from '../../../backend-proxy/src/runs/metrics-url';
import { runsScrapeJob } from '../../../scripts/demo-parts/prometheus';

it('metricsUrl: the worker itself or an allowed host, http(s), no query, no credentials', () => {
  assert.doesNotThrow(() => checkMetricsUrl('http://127.0.0.1:9464/metrics', '127.0.0.1', []));
  assert.doesNotThrow(() => checkMetricsUrl('http://10.0.0.7:9464/metrics', '::ffff:10.0.0.7', []));
  assert.doesNotThrow(() => checkMetricsUrl('https://worker-3.ci:9464/metrics', '10.0.0.9', ['worker-3.ci']));
  assert.doesNotThrow(() => checkMetricsUrl(undefined, '127.0.0.1', []));
  const refused: Array<[string, RegExp]> = [
    ['http://169.254.169.254/latest/meta-data', /neither the registering worker/],
    ['http://127.0.0.1:9090/federate?match[]={__name__=~".+"}', /query or fragment/],
    ['http://127.0.0.1:9464/metrics?__param_target=x', /query or fragment/],
    ['http://u:p@127.0.0.1:9464/metrics', /credentials/],
    ['file:///etc/passwd', /not http or https/],
    ['not a url', /not a URL/],
  ];
  for (const [url, why] of refused)
    assert.throws(
      () => checkMetricsUrl(url, '127.0.0.1', []),
      (e: unknown) => e instanceof RunsError && e.code === 'invalid' && why.test(e.message),
      url
    );
});

it("the demo's SD job: honor_labels false, the series' own run labels dropped", () => {
  const job = runsScrapeJob('http://127.0.0.1:3301');
  assert.match(job, /honor_labels: false/);
  assert.match(job, /action: labeldrop\n\s+regex: exported_\(run_id\|scenario\|worker_id\)/);
});
