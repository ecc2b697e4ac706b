"""gpufleet: GPU capacity on Kubernetes that costs nothing when idle.

config -> (software sources) -> cluster -> GPU pools -> GPU software -> queues -> samples ->
exports.
"""

import pulumi

from components import program
from components.model import gpu_health
from components.model.pools import resolve_pools, system_pool
from components.pulumi_config import load_from_pulumi

config = load_from_pulumi()
pools = resolve_pools(config)
sources = program.pin_software_sources(config)

cluster = program.build_cluster(config, system_pool(config))
gpu_pools = program.build_gpu_pools(config, pools, cluster)
software = program.build_gpu_software(config, pools, cluster, gpu_pools)
queues = program.build_queues(config, pools, cluster, gpu_pools)
samples = program.build_samples(config, pools, cluster, software, gpu_pools)

pulumi.export("cloud", config.cloud)
pulumi.export("clusterName", cluster.name)
pulumi.export("gpuSoftware", config.gpu_software_mode)
pulumi.export("gpuPools", [pool.to_output() for pool in pools])
pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kubeconfig))
for name, value in cluster.exports.items():
    pulumi.export(name, value)
sources.export()
if config.gpu_software.monitoring.dcgm_exporter and pools:
    xid_counts = gpu_health.xid_counts_exported(config.gpu_software_mode)
    pulumi.export(gpu_health.ALERT_RULES_OUTPUT, gpu_health.alert_rules_yaml(xid_counts))
