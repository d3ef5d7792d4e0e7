// The check of the values shipped for the ingress-nginx controller (run by the chart check).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  INGRESS_NGINX_DEFAULT_LOG_FORMAT,
  ingressNginxValuesProblems,
  logFormatProblems,
} from './ingress-nginx-values.mjs';

const FORMAT = '{"method":"$request_method","route":"$location_path","status":$status}';
const values = (config) => ({
  controller: {
    config: {
      'log-format-escape-json': 'true',
      'log-format-upstream': FORMAT,
      'error-log-level': 'crit',
      ...config,
    },
  },
});

test('a JSON format of the method, route and status passes', () => {
  assert.deepEqual(logFormatProblems(FORMAT), []);
  assert.deepEqual(ingressNginxValuesProblems(values({})), []);
});

test('every variable that holds the URL or part of it is refused, in either syntax', () => {
  for (const name of ['request', 'request_uri', 'uri', 'args', 'query_string', 'http_referer']) {
    for (const variable of [`$${name}`, `\${${name}}`]) {
      const problems = logFormatProblems(FORMAT.replace('$location_path', variable));
      assert.deepEqual(problems, [
        `the log format uses $${name}, which holds the URL or part of it`,
      ]);
    }
  }
  assert.match(logFormatProblems(FORMAT.replace('$location_path', '$arg_email'))[0], /\$arg_email/);
});

test('a variable not known to hold no URL is refused', () => {
  assert.deepEqual(logFormatProblems(FORMAT.replace('$location_path', '$remote_user')), [
    'the log format uses $remote_user, which is not known to hold no URL',
  ]);
});

test("ingress-nginx's own default format is refused", () => {
  const problems = logFormatProblems(INGRESS_NGINX_DEFAULT_LOG_FORMAT);
  assert.ok(problems.includes('the log format uses $request, which holds the URL or part of it'));
});

test('the format must be JSON, with only numbers unquoted', () => {
  assert.deepEqual(logFormatProblems('{"status":$status}'), []);
  assert.deepEqual(logFormatProblems('{"status":${status}}'), []);
  assert.deepEqual(logFormatProblems('{"route":$location_path}'), [
    '$location_path is not quoted, but not a number',
  ]);
  assert.match(logFormatProblems('$status $body_bytes_sent')[0] ?? '', /not a JSON object/);
  assert.deepEqual(logFormatProblems('"$request_method"'), ['the log format is not a JSON object']);
});

test('the values need JSON escaping and an error log above `error`', () => {
  assert.deepEqual(ingressNginxValuesProblems(values({ 'log-format-escape-json': 'false' })), [
    'controller.config.log-format-escape-json must be "true"',
  ]);
  assert.match(ingressNginxValuesProblems(values({ 'error-log-level': 'error' }))[0], /crit/);
  assert.deepEqual(ingressNginxValuesProblems({}), [
    'controller.config.log-format-upstream is not set',
  ]);
});
