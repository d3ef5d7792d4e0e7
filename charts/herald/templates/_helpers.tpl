{{- define "herald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "herald.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* A resource name for one process: <fullname>-<suffix>. Takes (list root suffix). */}}
{{- define "herald.resourceName" -}}
{{- $root := index . 0 }}
{{- printf "%s-%s" (include "herald.fullname" $root) (index . 1) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "herald.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels. Takes (list root component). */}}
{{- define "herald.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "herald.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Pod labels: the selector plus version and ownership, without the chart version. */}}
{{- define "herald.podLabels" -}}
{{- $root := index . 0 -}}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: herald
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
{{- end }}

{{/* Labels of every resource. Takes (list root component). */}}
{{- define "herald.labels" -}}
{{ include "herald.podLabels" . }}
helm.sh/chart: {{ include "herald.chart" (index . 0) }}
{{- end }}

{{/*
One process's settings: `defaults` with its block of `services` merged over it (lists and
scalars replace, maps merge). Takes (list root processName); returns YAML (use fromYaml).
*/}}
{{- define "herald.settings" -}}
{{- $root := index . 0 }}
{{- $process := index (include "herald.processes" $root | fromYaml) (index . 1) }}
{{- $own := index $root.Values.services $process.values | default dict }}
{{- mergeOverwrite (deepCopy $root.Values.defaults) (deepCopy $own) | toYaml }}
{{- end }}

{{/* The image of a process. Takes (list root process settings). */}}
{{- define "herald.image" -}}
{{- $root := index . 0 }}
{{- $process := index . 1 }}
{{- $image := (index . 2).image }}
{{- $repository := $image.repository }}
{{- if not $repository }}
{{- $repository = printf "%s/%s" $root.Values.image.repositoryPrefix $process.image }}
{{- if $root.Values.image.registry }}
{{- $repository = printf "%s/%s" $root.Values.image.registry $repository }}
{{- end }}
{{- end }}
{{- $tag := $image.tag | default $root.Values.image.tag | default $root.Chart.AppVersion }}
{{- if $image.digest }}
{{- printf "%s:%s@%s" $repository $tag $image.digest }}
{{- else }}
{{- printf "%s:%s" $repository $tag }}
{{- end }}
{{- end }}

{{/* The name of the Secret holding the shared secrets. */}}
{{- define "herald.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "herald.resourceName" (list . "secrets")) }}
{{- end }}

{{/*
The key of the Secret a process reads one of its `secrets` from. Takes (list processName variable).
Each process has its own SERVICE_TOKEN and SERVICE_CALLERS, so their keys name the process:
SERVICE_TOKEN_<PROCESS> (that caller's own token) and SERVICE_CALLERS_<PROCESS> (who may call
that process's internal routes); the other secrets are keys of their own name.
*/}}
{{- define "herald.secretKey" -}}
{{- $variable := index . 1 }}
{{- if has $variable (list "SERVICE_TOKEN" "SERVICE_CALLERS") }}
{{- printf "%s_%s" $variable (index . 0 | replace "-" "_" | upper) }}
{{- else }}
{{- $variable }}
{{- end }}
{{- end }}

{{/*
The keys of the Secret the enabled processes read, in order: ADMIN_TOKEN, the callers' tokens,
the services' caller lists, AUTH_SIGNING_KEYS (the Redis and database keys are not included).
*/}}
{{- define "herald.accessSecretKeys" -}}
{{- $keys := list }}
{{- $processes := include "herald.processes" . | fromYaml }}
{{- range $variable := list "ADMIN_TOKEN" "SERVICE_TOKEN" "SERVICE_CALLERS" "AUTH_SIGNING_KEYS" }}
{{- range $name, $process := $processes }}
{{- if and (has $variable $process.secrets) (include "herald.settings" (list $ $name) | fromYaml).enabled }}
{{- $keys = append $keys (include "herald.secretKey" (list $name $variable)) }}
{{- end }}
{{- end }}
{{- end }}
{{- $keys | uniq | join ", " }}
{{- end }}

{{/*
TLS in front of an Ingress: with its requireTls on, the install fails while it has no `tls`.
Takes (list valuesKey ingressValues whatWouldCrossInClear); prints nothing.
*/}}
{{- define "herald.requireIngressTls" -}}
{{- $key := index . 0 }}
{{- $ingress := index . 1 }}
{{- if and $ingress.requireTls (not $ingress.tls) }}
{{- fail (printf "%s.tls is empty: %s would cross the network in clear text. Add TLS with %s.tls: [{secretName: <certificate Secret>, hosts: [<host>]}] (cert-manager makes the Secret from the annotation cert-manager.io/cluster-issuer). Set %s.requireTls=false only when TLS ends in front of the ingress controller (a cloud load balancer terminating HTTPS)" $key (index . 2) $key $key) }}
{{- end }}
{{- end }}

{{/* The in-cluster base URL of a Herald service. Takes (list root processName). */}}
{{- define "herald.serviceUrl" -}}
{{- printf "http://%s:%v" (include "herald.resourceName" .) (index . 0).Values.service.port }}
{{- end }}

{{/*
DATABASE_URL of a process: from the database's own Secret when one is named (e.g. the `<cluster>-app`
Secret of CloudNativePG), else from `secretName` under <DATABASE>_DATABASE_URL.
Takes (list root databaseName secretName).
*/}}
{{- define "herald.databaseUrlEnv" -}}
{{- $root := index . 0 }}
{{- $database := index . 1 }}
{{- $own := index $root.Values.databases $database -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- if $own.existingSecret }}
      name: {{ $own.existingSecret }}
      key: {{ $own.key }}
      {{- else }}
      name: {{ index . 2 }}
      key: {{ printf "%s_DATABASE_URL" (upper $database) }}
      {{- end }}
{{- end }}

{{/* The Redis variable a process reads, by redis.mode. */}}
{{- define "herald.redisVariable" -}}
{{- if eq .Values.redis.mode "cluster" }}REDIS_CLUSTER_NODES{{ else }}REDIS_URL{{ end }}
{{- end }}

{{/* The /tmp volume a read-only root filesystem needs. Takes the process settings. */}}
{{- define "herald.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .tmpSizeLimit }}
{{- end }}

{{/* A NetworkPolicy egress rule to an external dependency. Takes (list name rule). */}}
{{- define "herald.externalEgress" -}}
{{- $rule := index . 1 -}}
# {{ index . 0 }}
- ports:
    {{- toYaml $rule.ports | nindent 4 }}
  {{- with $rule.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/* The DNS egress rule. */}}
{{- define "herald.dnsEgress" -}}
# DNS
- to:
    {{- toYaml (list .Values.networkPolicy.dns) | nindent 4 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end }}

{{/*
The <DATABASE>_DATABASE_URL keys of a chart-made Secret: one for each database that an enabled
process owns and that has no Secret of its own.
*/}}
{{- define "herald.databaseUrlData" -}}
{{- range $name, $process := include "herald.processes" . | fromYaml }}
{{- if and $process.migrate (include "herald.settings" (list $ $name) | fromYaml).enabled }}
{{- if not (index $.Values.databases $process.database).existingSecret }}
{{- $key := printf "%s_DATABASE_URL" (upper $process.database) }}
{{ $key }}: {{ required (printf "secrets.databaseUrls.%s is required (or databases.%s.existingSecret)" $process.database $process.database) (index $.Values.secrets.databaseUrls $process.database) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The ConfigMap data of one process, as YAML. Takes (list root processName). */}}
{{- define "herald.configData" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $processes := include "herald.processes" $root | fromYaml }}
{{- $process := index $processes $name }}
{{- $settings := include "herald.settings" (list $root $name) | fromYaml }}
{{- $data := dict "HOST" $root.Values.config.listenHost "PORT" (toString $root.Values.containerPort) "LOG_LEVEL" $root.Values.config.logLevel }}
{{- if $process.kafka }}
{{- $_ := set $data "KAFKA_BROKERS" (join "," $root.Values.kafka.brokers) }}
{{- end }}
{{- range $callee := $process.calls }}
{{- $_ := set $data (printf "SERVICE_URL_%s" (upper $callee)) (include "herald.serviceUrl" (list $root $callee)) }}
{{- if eq $callee "auth" }}
{{- $_ := set $data "AUTH_JWKS_URL" (printf "%s/.well-known/jwks.json" (include "herald.serviceUrl" (list $root "auth"))) }}
{{- end }}
{{- end }}
{{- if eq $name "contacts" }}
{{- $holders := list }}
{{- range $other, $otherProcess := $processes }}
{{- if and $otherProcess.holdsContactData (include "herald.settings" (list $root $other) | fromYaml).enabled }}
{{- $holders = append $holders (include "herald.serviceUrl" (list $root $other)) }}
{{- end }}
{{- end }}
{{- if and (include "herald.settings" (list $root "contacts") | fromYaml).enabled (not $holders) }}
{{- fail "services.contacts needs a service holding Contact data (events) enabled: without one, erasing a Contact would leave its Events behind" }}
{{- end }}
{{- $_ := set $data "CONTACT_DATA_SERVICES" (join "," $holders) }}
{{- end }}
{{- $_ := set $data "OTEL_SERVICE_NAME" (printf "herald-%s" $name) }}
{{- with $root.Values.telemetry.otlpEndpoint }}
{{- $telemetry := $root.Values.telemetry }}
{{- $_ := set $data "OTEL_EXPORTER_OTLP_ENDPOINT" . }}
{{- $_ := set $data "OTEL_TRACES_SAMPLER" "parentbased_traceidratio" }}
{{- $_ := set $data "OTEL_TRACES_SAMPLER_ARG" (toString $telemetry.traceSampleRatio) }}
{{- $_ := set $data "OTEL_METRIC_EXPORT_INTERVAL" ($telemetry.metricExportIntervalMs | int | toString) }}
{{- with $telemetry.clientSpans }}
{{- $_ := set $data "HERALD_OTEL_CLIENT_SPANS" (join "," .) }}
{{- end }}
{{- end }}
{{- if and (not $root.Values.telemetry.otlpEndpoint) (not $root.Values.metrics.enabled) }}
{{- /* no collector and no Prometheus endpoint: no SDK at all */}}
{{- $_ := set $data "OTEL_SDK_DISABLED" "true" }}
{{- end }}
{{- if $root.Values.metrics.enabled }}
{{- $_ := set $data "METRICS_PORT" (include "herald.metricsPort" $root) }}
{{- end }}
{{- with $root.Values.telemetry.resourceAttributes }}
{{- $_ := set $data "OTEL_RESOURCE_ATTRIBUTES" . }}
{{- end }}
{{- /* TLS and users of the backends it uses (backends.*, _backends.tpl) */}}
{{- range $key, $value := include "herald.backendConfig" (list $root $process) | fromYaml }}
{{- $_ := set $data $key $value }}
{{- end }}
{{- include "herald.refuseSecretVariables" (list $root $name $settings) }}
{{- range $key, $value := $settings.env }}
{{- $_ := set $data $key (toString $value) }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/*
Names of variables that hold secrets, any case: the pattern of values.schema.json's
definitions.secretVariableName, the same text (the chart check compares them).
*/}}
{{- define "herald.secretVariablePattern" -}}
^(?i:ADMIN_TOKEN|SERVICE_TOKEN(_.*)?|SERVICE_CALLERS(_.*)?|(.*_)?TOKENS?|.*SECRET.*|.*PASSWORD.*|.*PASSWD.*|.*_PASS|(.*_)?KEYS?|.*APIKEY.*|.*CREDENTIALS?.*|(.*_)?DATABASE_URL|REDIS_URL|REDIS_CLUSTER_NODES|OTEL_EXPORTER_OTLP(_TRACES|_METRICS|_LOGS)?_HEADERS)$
{{- end }}

{{/*
No secret in a process's env (its ConfigMap, which whoever may read ConfigMaps reads) nor as a
plain extraEnv value. The schema refuses them first; this holds for installs that skip it.
Takes (list root processName settings); prints nothing.
*/}}
{{- define "herald.refuseSecretVariables" -}}
{{- $name := index . 1 }}
{{- $settings := index . 2 }}
{{- $values := (index (include "herald.processes" (index . 0) | fromYaml) $name).values }}
{{- $pattern := include "herald.secretVariablePattern" . }}
{{- range $key, $_ := $settings.env }}
{{- if regexMatch $pattern $key }}
{{- fail (printf "%s in the env of %s (defaults.env or services.%s.env) names a secret, which env would store in plain text in a ConfigMap: put it in the Secret (secrets.existingSecret, or secrets.* when the chart makes the Secret), or give it with extraEnv and valueFrom.secretKeyRef" $key $name $values) }}
{{- end }}
{{- end }}
{{- range $entry := $settings.extraEnv }}
{{- if and (regexMatch $pattern (toString $entry.name)) (not $entry.valueFrom) }}
{{- fail (printf "extraEnv %s of %s (defaults.extraEnv or services.%s.extraEnv) names a secret: take it from a Secret with valueFrom.secretKeyRef, never a plain value" $entry.name $name $values) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The metrics port (metrics.port), checked: it must not be the API's containerPort.
*/}}
{{- define "herald.metricsPort" -}}
{{- if eq (int .Values.metrics.port) (int .Values.containerPort) }}
{{- fail (printf "metrics.port (%v) must differ from containerPort: metrics are served apart from the API" .Values.metrics.port) }}
{{- end }}
{{- .Values.metrics.port | int | toString }}
{{- end }}
