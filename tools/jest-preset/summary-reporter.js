// Writes each package's test counts, and the names of its failed tests, to
// $HERALD_TEST_RESULTS_DIR/<package>.json, so the root test runner can close with one summary for
// the whole repository that still names every failure when only the end of a long log is kept.
import fs from 'node:fs';
import path from 'node:path';

/** The first lines of a failure message: enough to recognise it, short enough for a summary. */
const firstLines = (message, count = 6) =>
  String(message ?? '')
    // eslint-disable-next-line no-control-regex -- strips the colour codes jest puts in messages
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, count);

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const dir = process.env.HERALD_TEST_RESULTS_DIR;
    if (!dir) return;
    const name = JSON.parse(fs.readFileSync(path.join(process.cwd(), 'package.json'), 'utf8')).name;
    const failures = [];
    for (const file of results.testResults) {
      const relative = path.relative(process.cwd(), file.testFilePath);
      if (file.testExecError) {
        failures.push({ test: relative, message: firstLines(file.testExecError.message) });
      }
      for (const test of file.testResults) {
        if (test.status !== 'failed') continue;
        failures.push({
          test: `${relative} › ${test.fullName}`,
          message: firstLines(test.failureMessages[0]),
        });
      }
    }
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${name.replace(/[@/]/g, '_')}.json`),
      JSON.stringify({
        name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
        failures,
      }),
    );
  }
}
