"""Every kind the e2e suite reads or writes, with where it lives in the API."""

from __future__ import annotations

from .kube import Kind

NAMESPACE = Kind("v1", "Namespace", "namespaces", namespaced=False)
SECRET = Kind("v1", "Secret", "secrets")
CLUSTER_ROLE = Kind("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False)
ROLE = Kind("rbac.authorization.k8s.io/v1", "Role", "roles")
ROLE_BINDING = Kind("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False
)
EVENT = Kind("v1", "Event", "events")
DEPLOYMENT = Kind("apps/v1", "Deployment", "deployments")
CRD = Kind(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    namespaced=False,
)
STORAGE_CLASS = Kind("storage.k8s.io/v1", "StorageClass", "storageclasses", namespaced=False)
VALIDATING_WEBHOOK = Kind(
    "admissionregistration.k8s.io/v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    namespaced=False,
)

XRD = Kind(
    "apiextensions.crossplane.io/v2",
    "CompositeResourceDefinition",
    "compositeresourcedefinitions",
    namespaced=False,
)
COMPOSITION = Kind(
    "apiextensions.crossplane.io/v1", "Composition", "compositions", namespaced=False
)
COMPOSITION_REVISION = Kind(
    "apiextensions.crossplane.io/v1",
    "CompositionRevision",
    "compositionrevisions",
    namespaced=False,
)
FUNCTION = Kind("pkg.crossplane.io/v1", "Function", "functions", namespaced=False)
FUNCTION_REVISION = Kind(
    "pkg.crossplane.io/v1", "FunctionRevision", "functionrevisions", namespaced=False
)
PROVIDER = Kind("pkg.crossplane.io/v1", "Provider", "providers", namespaced=False)
PROVIDER_REVISION = Kind(
    "pkg.crossplane.io/v1", "ProviderRevision", "providerrevisions", namespaced=False
)
CONFIGURATION = Kind("pkg.crossplane.io/v1", "Configuration", "configurations", namespaced=False)
LOCK = Kind("pkg.crossplane.io/v1beta1", "Lock", "locks", namespaced=False)
IMAGE_CONFIG = Kind("pkg.crossplane.io/v1beta1", "ImageConfig", "imageconfigs", namespaced=False)
DEPLOYMENT_RUNTIME_CONFIG = Kind(
    "pkg.crossplane.io/v1beta1",
    "DeploymentRuntimeConfig",
    "deploymentruntimeconfigs",
    namespaced=False,
)
MRD = Kind(
    "apiextensions.crossplane.io/v1alpha1",
    "ManagedResourceDefinition",
    "managedresourcedefinitions",
    namespaced=False,
)
MRAP = Kind(
    "apiextensions.crossplane.io/v1alpha1",
    "ManagedResourceActivationPolicy",
    "managedresourceactivationpolicies",
    namespaced=False,
)
USAGE = Kind("protection.crossplane.io/v1beta1", "Usage", "usages")
INPUT_CRD_NAME = "inputs.inference.fn.modelplane.ai"

COREWEAVE_CLUSTER_XR = Kind(
    "infrastructure.modelplane.ai/v1alpha1", "CoreWeaveCluster", "coreweaveclusters"
)
CIVO_CLUSTER_XR = Kind("infrastructure.modelplane.ai/v1alpha1", "CivoCluster", "civoclusters")

COREWEAVE_PROVIDER_CONFIG = Kind(
    "coreweave.m.crossplane.io/v1beta1",
    "ClusterProviderConfig",
    "clusterproviderconfigs",
    namespaced=False,
)
COREWEAVE_VPC = Kind("networking.coreweave.m.crossplane.io/v1alpha1", "VPC", "vpcs")
CKS_CLUSTER = Kind("cks.coreweave.m.crossplane.io/v1alpha1", "Cluster", "clusters")
CKS_NODEPOOL = Kind("compute.coreweave.com/v1alpha1", "NodePool", "nodepools", namespaced=False)

KUBERNETES_PROVIDER_CONFIG = Kind(
    "kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig", "providerconfigs"
)
KUBERNETES_OBJECT = Kind("kubernetes.m.crossplane.io/v1alpha1", "Object", "objects")

CIVO_PROVIDER_CONFIG = Kind(
    "civo.m.upbound.io/v1beta1",
    "ClusterProviderConfig",
    "clusterproviderconfigs",
    namespaced=False,
)
CIVO_NETWORK = Kind("vpc.civo.m.upbound.io/v1beta1", "Network", "networks")
CIVO_FIREWALL = Kind("vpc.civo.m.upbound.io/v1beta1", "Firewall", "firewalls")
CIVO_CLUSTER = Kind("kubernetes.civo.m.upbound.io/v1beta1", "Cluster", "clusters")
CIVO_NODEPOOL = Kind("kubernetes.civo.m.upbound.io/v1beta1", "NodePool", "nodepools")
HELM_PROVIDER_CONFIG = Kind("helm.m.crossplane.io/v1beta1", "ProviderConfig", "providerconfigs")
HELM_RELEASE = Kind("helm.m.crossplane.io/v1beta1", "Release", "releases")

# Everything an XR of each kind may compose, for the composed-set and nothing-left checks.
COREWEAVE_COMPOSED = (
    COREWEAVE_VPC,
    CKS_CLUSTER,
    USAGE,
    SECRET,
    KUBERNETES_PROVIDER_CONFIG,
    KUBERNETES_OBJECT,
)
CIVO_COMPOSED = (
    CIVO_NETWORK,
    CIVO_FIREWALL,
    CIVO_CLUSTER,
    CIVO_NODEPOOL,
    USAGE,
    HELM_PROVIDER_CONFIG,
    HELM_RELEASE,
)
