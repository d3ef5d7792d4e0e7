// The values for the ingress-nginx controller that charts/herald ships
// (charts/herald/files/ingress-nginx-values.yaml): its access log must hold no URL, as Herald's
// own logs hold none. The log format may use only variables known to hold no part of the request's
// path or query (an allowlist, so a new variable is a decision, not an accident), must be JSON
// escaped as JSON, and the error log (which appends the request line) must stay above `error`.

/** Variables that hold the URL or part of it, or a header that can (Referer): never logged. */
export const URL_VARIABLES = [
  'request',
  'request_uri',
  'uri',
  'document_uri',
  'args',
  'query_string',
  'is_args',
  'escaped_request_uri',
  'request_filename',
  'request_body',
  'http_referer',
  'http_x_original_uri',
  'http_x_original_url',
];

/** Variables that hold no URL, with the unquoted (numeric) ones marked. */
const ALLOWED = {
  time_iso8601: 'string',
  time_local: 'string',
  req_id: 'string',
  remote_addr: 'string',
  host: 'string',
  request_method: 'string',
  server_protocol: 'string',
  location_path: 'string',
  namespace: 'string',
  ingress_name: 'string',
  service_name: 'string',
  service_port: 'string',
  proxy_upstream_name: 'string',
  proxy_alternative_upstream_name: 'string',
  upstream_addr: 'string',
  upstream_status: 'string',
  upstream_response_length: 'string',
  upstream_response_time: 'string',
  http_user_agent: 'string',
  status: 'number',
  body_bytes_sent: 'number',
  bytes_sent: 'number',
  request_length: 'number',
  request_time: 'number',
};

// Error log levels above `error` (nginx logs a request's errors at `error` and below).
const QUIET_ERROR_LOG_LEVELS = ['crit', 'alert', 'emerg'];
// An nginx variable: $name or ${name}.
const VARIABLE = /\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/g;

/** The problems of a `log-format-upstream` value (empty when none). */
export function logFormatProblems(format) {
  const problems = [];
  const variables = [...format.matchAll(VARIABLE)].map((m) => m[1] ?? m[2]);
  if (variables.length === 0) problems.push('the log format uses no variable');
  for (const name of new Set(variables)) {
    if (URL_VARIABLES.includes(name) || /^(arg|cookie)_/.test(name)) {
      problems.push(`the log format uses $${name}, which holds the URL or part of it`);
    } else if (!(name in ALLOWED)) {
      problems.push(`the log format uses $${name}, which is not known to hold no URL`);
    }
  }
  // Unquoted, a variable must be a number; every value replaced by 1 must leave JSON.
  for (const m of format.matchAll(new RegExp(`:\\s*${VARIABLE.source}`, 'g'))) {
    const name = m[1] ?? m[2];
    if (ALLOWED[name] !== 'number') problems.push(`$${name} is not quoted, but not a number`);
  }
  let parsed;
  try {
    parsed = JSON.parse(format.replace(VARIABLE, '1'));
  } catch (error) {
    problems.push(`the log format is not a JSON object: ${error.message}`);
  }
  if (parsed !== undefined && (typeof parsed !== 'object' || Array.isArray(parsed))) {
    problems.push('the log format is not a JSON object');
  }
  return problems;
}

/** The problems of the controller chart's values (parsed YAML). */
export function ingressNginxValuesProblems(values) {
  const config = values?.controller?.config ?? {};
  const format = config['log-format-upstream'];
  if (typeof format !== 'string') return ['controller.config.log-format-upstream is not set'];
  const problems = logFormatProblems(format);
  if (config['log-format-escape-json'] !== 'true') {
    problems.push('controller.config.log-format-escape-json must be "true"');
  }
  if (!QUIET_ERROR_LOG_LEVELS.includes(config['error-log-level'])) {
    problems.push(
      `controller.config.error-log-level must be one of ${QUIET_ERROR_LOG_LEVELS.join(', ')}: ` +
        'below, nginx appends the request line to the errors about a request',
    );
  }
  return problems;
}

/** ingress-nginx's own default access log format: it logs $request, so the check must refuse it. */
export const INGRESS_NGINX_DEFAULT_LOG_FORMAT =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ' +
  '"$http_user_agent" $request_length $request_time [$proxy_upstream_name] ' +
  '[$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length ' +
  '$upstream_response_time $upstream_status $req_id';
