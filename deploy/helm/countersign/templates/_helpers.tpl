{{/* The chart's name. */}}
{{- define "countersign.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's resources' name. */}}
{{- define "countersign.fullname" -}}
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

{{- define "countersign.selectorLabels" -}}
app.kubernetes.io/name: {{ include "countersign.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "countersign.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "countersign.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The tools root: config.tools.root, the image's home by default. */}}
{{- define "countersign.toolsRoot" -}}
{{- dig "tools" "root" "/home/countersign" .Values.config }}
{{- end }}

{{/* The variable that holds the Redis URL (store.redis_url_env). */}}
{{- define "countersign.redisEnv" -}}COUNTERSIGN_REDIS_URL{{- end }}

{{/* The bot's configuration: config with the keys the chart owns. */}}
{{- define "countersign.config" -}}
{{- $own := dict "ops" (dict "listen" (printf "0.0.0.0:%d" (int .Values.ops.port))) "store" (dict "redis_url_env" (include "countersign.redisEnv" .)) }}
{{- mustMergeOverwrite (deepCopy .Values.config) $own | toYaml }}
{{- end }}

{{/* The Bitnami chart's name for this release (its common.names.fullname). */}}
{{- define "countersign.redisFullname" -}}
{{- if .Values.redis.fullnameOverride }}
{{- .Values.redis.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains "redis" .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-redis" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Whether the store has a Redis; more than one replica needs one. */}}
{{- define "countersign.hasRedis" -}}
{{- if or .Values.redis.enabled .Values.store.redisURL .Values.store.redisURLSecret.key }}true{{ end }}
{{- end }}

{{/* The variables that reach Redis, in the order of values.yaml. */}}
{{- define "countersign.redisEnvVars" -}}
{{- $var := include "countersign.redisEnv" . }}
{{- if .Values.redis.enabled }}
{{- if .Values.redis.auth.enabled }}
- name: COUNTERSIGN_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ default (include "countersign.redisFullname" .) .Values.redis.auth.existingSecret }}
      key: {{ .Values.redis.auth.existingSecretPasswordKey }}
- name: {{ $var }}
  value: {{ printf "redis://:$(COUNTERSIGN_REDIS_PASSWORD)@%s-master:%d/%d" (include "countersign.redisFullname" .) (int .Values.redis.port) (int .Values.redis.db) | quote }}
{{- else }}
- name: {{ $var }}
  value: {{ printf "redis://%s-master:%d/%d" (include "countersign.redisFullname" .) (int .Values.redis.port) (int .Values.redis.db) | quote }}
{{- end }}
{{- else if .Values.store.redisURL }}
{{- if regexMatch "://[^/@]*:[^/@]*@" .Values.store.redisURL }}
{{- fail "store.redisURL holds a password: put the URL in a Secret and name it in store.redisURLSecret instead" }}
{{- end }}
- name: {{ $var }}
  value: {{ .Values.store.redisURL | quote }}
{{- else if .Values.store.redisURLSecret.key }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ default .Values.tokens.existingSecret .Values.store.redisURLSecret.name | required "store.redisURLSecret.name (or tokens.existingSecret) must name the Secret that holds the Redis URL" }}
      key: {{ .Values.store.redisURLSecret.key }}
{{- end }}
{{- end }}
