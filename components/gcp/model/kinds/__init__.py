"""GKE's pool kinds: node pools (custom compute classes would be a sibling)."""
