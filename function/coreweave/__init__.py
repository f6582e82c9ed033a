"""CoreWeaveCluster: a CKS cluster, its VPC, node pools, kubeconfig and RWX storage."""
