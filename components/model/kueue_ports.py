"""Where the API server calls Kueue's controller (kubernetes-sigs/kueue charts/kueue v0.19.2,
the chart `components.model.kueue` pins), kept apart from that module so the clouds' models can
read it without importing the pool registry.

- Its admission webhooks: values.yaml `managerConfig.controllerManagerConfigYaml` webhook.port
  and `webhookService.ports[0].targetPort` (9443; tests/test_kueue.py compares it with
  `kueue.CHART_MANAGER_CONFIG`). They refuse what they cannot reach (failurePolicy Fail), so a
  network that drops the port stops Job creation in the queues' namespaces.
- Its visibility API server: templates/visibility/service.yaml `targetPort: 8082`, behind the
  APIServices v1beta1/v1beta2.visibility.kueue.x-k8s.io the chart always installs. The API
  server aggregates it; unreachable, the APIService is unavailable, which fails API discovery
  and stalls namespace deletion.
"""

from __future__ import annotations

from typing import Final

WEBHOOK_PORT: Final[int] = 9443
VISIBILITY_PORT: Final[int] = 8082
CONTROL_PLANE_PORTS: Final[tuple[int, ...]] = (WEBHOOK_PORT, VISIBILITY_PORT)
