// Writes each package's test counts to $HERALD_TEST_RESULTS_DIR/<package>.json, so the root
// test runner can print one closing line for the whole repository.
import fs from 'node:fs';
import path from 'node:path';

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const dir = process.env.HERALD_TEST_RESULTS_DIR;
    if (!dir) return;
    const name = JSON.parse(fs.readFileSync(path.join(process.cwd(), 'package.json'), 'utf8')).name;
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${name.replace(/[@/]/g, '_')}.json`),
      JSON.stringify({
        name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
      }),
    );
  }
}
