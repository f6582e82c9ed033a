"""function-inference-clusters: GPU inference clusters on CoreWeave CKS and Civo."""
