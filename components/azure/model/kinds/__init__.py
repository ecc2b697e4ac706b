"""AKS's pool kinds: agent pools (node auto-provisioning's NodePools would be a sibling)."""
