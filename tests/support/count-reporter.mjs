// node:test reporter that counts leaf tests (not suites, not file wrappers) and writes one JSON object at the end.
// tests/run.ts sums these across stages into the single closing line.
export default async function* countReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.details?.type === 'suite') continue;
    if ((data.skip !== undefined && data.skip !== false) || (data.todo !== undefined && data.todo !== false)) {
      counts.skipped++;
    } else if (event.type === 'test:pass') {
      counts.passed++;
    } else {
      counts.failed++;
      counts.failures.push(`${data.file ?? ''} › ${data.name}`);
    }
  }
  yield JSON.stringify(counts) + '\n';
}
