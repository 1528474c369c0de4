// kube-state-metrics' mixin (its alerts) as kube-prometheus v0.18.0 configures it for the
// kube-state-metrics it deploys: jsonnet/kube-prometheus/components/kube-state-metrics.libsonnet at
// v0.18.0 (4775d44d) sets this _config field (its runbook URLs aside). Rendered by
// scripts/build-tools.sh (mixins) from the kube-state-metrics module at the release gpusynth
// emulates (signals/kubernetes.md), into one Prometheus rule file.
local mixin = (import 'mixin.libsonnet') + {
  _config+:: {
    kubeStateMetricsSelector: 'job="kube-state-metrics"',
  },
};
{ groups: mixin.prometheusAlerts.groups }
