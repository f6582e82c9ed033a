"""CivoCluster: a Civo k3s cluster on its own network and firewall, its pools and autoscaler."""
