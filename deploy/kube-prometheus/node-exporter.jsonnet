// node_exporter's node-mixin (its rules and alerts) as kube-prometheus v0.18.0 configures it for
// the node-exporter it deploys: jsonnet/kube-prometheus/components/node-exporter.libsonnet at
// v0.18.0 (4775d44d) sets these _config fields (its runbook URLs aside). Rendered by
// scripts/build-tools.sh (mixins) from the node_exporter module at the release kube-prometheus
// deploys, into one Prometheus rule file.
local mixin = (import 'mixin.libsonnet') + {
  _config+:: {
    nodeExporterSelector: 'job="node-exporter"',
    fsSpaceFillingUpWarningThreshold: 15,
    fsSpaceFillingUpCriticalThreshold: 10,
    diskDeviceSelector: 'device=~"(/dev/)?(mmcblk.p.+|nvme.+|rbd.+|sd.+|vd.+|xvd.+|dm-.+|md.+|dasd.+)"',
  },
};
{ groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups }
