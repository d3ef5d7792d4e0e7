{{- /*
TLS and authentication to PostgreSQL, Redis and Kafka (`backends`). A process gets the settings
of the backends it uses: the non-secret ones as variables (its ConfigMap, or the migration Job's
env), the passwords from the Secret, and each CA bundle as a file mounted read-only from the
Secret or ConfigMap that `backends.<name>.tls.ca` names.
*/}}

{{/* Where a backend's CA bundle is mounted; the file is ca.crt in it. */}}
{{- define "herald.backendCaDir" -}}
/etc/herald/tls/{{ . }}
{{- end }}

{{/* Whether a CA source names a Secret or a ConfigMap. Takes the `ca` block; "true" or "". */}}
{{- define "herald.backendCaSet" -}}
{{- if or .secretName .configMapName }}true{{ end }}
{{- end }}

{{/*
The backends a process uses, by name, with their TLS block: postgres (it has a database),
redis, kafka. Takes (list root process); returns YAML (use fromYaml).
*/}}
{{- define "herald.processBackends" -}}
{{- $root := index . 0 }}
{{- $process := index . 1 }}
{{- $b := $root.Values.backends }}
{{- $used := dict }}
{{- if $process.database }}{{ $_ := set $used "postgres" $b.postgres.tls }}{{ end }}
{{- if $process.redis }}{{ $_ := set $used "redis" $b.redis.tls }}{{ end }}
{{- if $process.kafka }}{{ $_ := set $used "kafka" $b.kafka.tls }}{{ end }}
{{- toYaml $used }}
{{- end }}

{{/*
The non-secret variables of the backends a process uses, as YAML (use fromYaml); nothing with
the defaults. Takes (list root process).
*/}}
{{- define "herald.backendConfig" -}}
{{- $root := index . 0 }}
{{- $process := index . 1 }}
{{- $b := $root.Values.backends }}
{{- $data := dict }}
{{- if $process.database }}
{{- with $b.postgres.tls.sslMode }}{{ $_ := set $data "DATABASE_SSL_MODE" . }}{{ end }}
{{- if include "herald.backendCaSet" $b.postgres.tls.ca }}
{{- $_ := set $data "DATABASE_CA_FILE" (printf "%s/ca.crt" (include "herald.backendCaDir" "postgres")) }}
{{- end }}
{{- end }}
{{- if $process.redis }}
{{- if $b.redis.tls.enabled }}{{ $_ := set $data "REDIS_TLS" "true" }}{{ end }}
{{- if include "herald.backendCaSet" $b.redis.tls.ca }}
{{- $_ := set $data "REDIS_CA_FILE" (printf "%s/ca.crt" (include "herald.backendCaDir" "redis")) }}
{{- end }}
{{- if and $b.redis.auth.enabled $b.redis.auth.username }}
{{- $_ := set $data "REDIS_USERNAME" $b.redis.auth.username }}
{{- end }}
{{- end }}
{{- if $process.kafka }}
{{- if $b.kafka.tls.enabled }}{{ $_ := set $data "KAFKA_TLS" "true" }}{{ end }}
{{- if include "herald.backendCaSet" $b.kafka.tls.ca }}
{{- $_ := set $data "KAFKA_CA_FILE" (printf "%s/ca.crt" (include "herald.backendCaDir" "kafka")) }}
{{- end }}
{{- with $b.kafka.sasl.mechanism }}
{{- $_ := set $data "KAFKA_SASL_MECHANISM" . }}
{{- $_ := set $data "KAFKA_SASL_USERNAME" $b.kafka.sasl.username }}
{{- end }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/*
The Secret keys of the backends' passwords that the enabled settings need: REDIS_PASSWORD
(backends.redis.auth.enabled), KAFKA_SASL_PASSWORD (backends.kafka.sasl.mechanism). Takes
(list root process); a process is a dict with `redis` and `kafka`. Returns a comma-separated list.
*/}}
{{- define "herald.backendSecretKeys" -}}
{{- $root := index . 0 }}
{{- $process := index . 1 }}
{{- $keys := list }}
{{- if and $process.redis $root.Values.backends.redis.auth.enabled }}
{{- $keys = append $keys "REDIS_PASSWORD" }}
{{- end }}
{{- if and $process.kafka $root.Values.backends.kafka.sasl.mechanism }}
{{- $keys = append $keys "KAFKA_SASL_PASSWORD" }}
{{- end }}
{{- join "," $keys }}
{{- end }}

{{/* The container `env` entries of those passwords. Takes (list root process secretName). */}}
{{- define "herald.backendSecretEnv" -}}
{{- range $key := splitList "," (include "herald.backendSecretKeys" (list (index . 0) (index . 1))) }}
{{- if $key }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ index $ 2 }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The passwords as data of a chart-made Secret, for the processes given (those the Secret serves).
Takes (list root processes).
*/}}
{{- define "herald.backendSecretData" -}}
{{- $root := index . 0 }}
{{- $s := $root.Values.secrets }}
{{- $wanted := list }}
{{- range $process := index . 1 }}
{{- $wanted = concat $wanted (splitList "," (include "herald.backendSecretKeys" (list $root $process))) }}
{{- end }}
{{- if has "REDIS_PASSWORD" $wanted }}
REDIS_PASSWORD: {{ required "secrets.redisPassword is required when backends.redis.auth.enabled" $s.redisPassword | quote }}
{{- end }}
{{- if has "KAFKA_SASL_PASSWORD" $wanted }}
KAFKA_SASL_PASSWORD: {{ required "secrets.kafkaSaslPassword is required when backends.kafka.sasl.mechanism is set" $s.kafkaSaslPassword | quote }}
{{- end }}
{{- end }}

{{/* The volumeMounts of the CA bundles of the backends a process uses. Takes (list root process). */}}
{{- define "herald.backendCaMounts" -}}
{{- range $name, $tls := include "herald.processBackends" . | fromYaml }}
{{- if include "herald.backendCaSet" $tls.ca }}
- name: tls-{{ $name }}
  mountPath: {{ include "herald.backendCaDir" $name }}
  readOnly: true
{{- end }}
{{- end }}
{{- end }}

{{/* The volumes of those CA bundles, the chosen key as ca.crt. Takes (list root process). */}}
{{- define "herald.backendCaVolumes" -}}
{{- range $name, $tls := include "herald.processBackends" . | fromYaml }}
{{- $ca := $tls.ca }}
{{- if include "herald.backendCaSet" $ca }}
- name: tls-{{ $name }}
  {{- if $ca.secretName }}
  secret:
    secretName: {{ $ca.secretName }}
  {{- else }}
  configMap:
    name: {{ $ca.configMapName }}
  {{- end }}
    items:
      - key: {{ $ca.key }}
        path: ca.crt
{{- end }}
{{- end }}
{{- end }}
