{{/* The labels every object carries and the selectors match: the same as the kustomize base's. */}}
{{- define "gpusynth.labels" -}}
app.kubernetes.io/name: gpusynth
{{- end -}}
