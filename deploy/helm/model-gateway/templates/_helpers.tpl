{{/* Name of the chart's objects: the release name, plus the chart name unless it contains it. */}}
{{- define "model-gateway.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "model-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "model-gateway.labels" -}}
{{ include "model-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret holding MASTER_KEY: the one given, else the one the chart generates (secret.yaml). */}}
{{- define "model-gateway.masterKeySecret" -}}
{{- .Values.masterKey.existingSecret | default (printf "%s-master-key" (include "model-gateway.fullname" .)) -}}
{{- end -}}

{{/* SQLite on a PersistentVolumeClaim: no PostgreSQL and persistence on. */}}
{{- define "model-gateway.persistent" -}}
{{- if and (not .Values.postgresql.enabled) .Values.persistence.enabled -}}true{{- end -}}
{{- end -}}

{{/* More than one pod, now or through the autoscaler. */}}
{{- define "model-gateway.replicated" -}}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled -}}true{{- end -}}
{{- end -}}

{{/* RATE_LIMITS_STORE: the value given, else redis when replicated, else memory. */}}
{{- define "model-gateway.rateLimitsStore" -}}
{{- if .Values.rateLimits.store -}}
{{- .Values.rateLimits.store -}}
{{- else if include "model-gateway.replicated" . -}}
redis
{{- else -}}
memory
{{- end -}}
{{- end -}}

{{/* Refuses settings that cannot work or would run open: no master key (or env overriding it), replicas without PostgreSQL or Redis. */}}
{{- define "model-gateway.validate" -}}
{{- if and (not .Values.masterKey.existingSecret) (not .Values.masterKey.generate) -}}
{{- fail (printf "masterKey.existingSecret is required when masterKey.generate=false (without a master key every route is open): kubectl create secret generic gateway-secrets --from-literal=%s=\"$(openssl rand -hex 32)\" then --set masterKey.existingSecret=gateway-secrets" .Values.masterKey.key) -}}
{{- end -}}
{{- range $name, $value := .Values.env -}}
{{- if or (eq $name "MASTER_KEY") (eq $name "HOST") (eq $name "ALLOW_OPEN_NETWORK") -}}
{{- fail "env may not set MASTER_KEY, HOST or ALLOW_OPEN_NETWORK: the chart never runs in open mode (the master key comes from masterKey.existingSecret)" -}}
{{- end -}}
{{- end -}}
{{- if and (include "model-gateway.replicated" .) (not .Values.postgresql.enabled) -}}
{{- fail "more than one replica (or autoscaling) needs postgresql.enabled=true: SQLite cannot be shared by pods" -}}
{{- end -}}
{{- if and (eq (include "model-gateway.rateLimitsStore" .) "redis") (not .Values.redis.enabled) -}}
{{- fail "rate-limit counters in Redis (the default with more than one replica) need redis.enabled=true" -}}
{{- end -}}
{{- if and (eq .Values.responseCache.store "redis") (not .Values.redis.enabled) -}}
{{- fail "responseCache.store=redis needs redis.enabled=true" -}}
{{- end -}}
{{- if and .Values.postgresql.enabled (not .Values.postgresql.existingSecret) -}}
{{- fail "postgresql.existingSecret is required: a Secret holding DATABASE_URL" -}}
{{- end -}}
{{- if and .Values.redis.enabled (not .Values.redis.existingSecret) -}}
{{- fail "redis.existingSecret is required: a Secret holding REDIS_URL" -}}
{{- end -}}
{{- end -}}
