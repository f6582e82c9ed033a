"""Every kind the e2e suite reads or writes, with where it lives in the API."""

from __future__ import annotations

from .kube import Kind


def plural_of(kind: str) -> str:
    """The resource name the API server serves a kind under: every kind here, built-in or CRD,
    is named by English's regular plural of its lower-cased kind."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def namespaced(api_version: str, kind: str) -> Kind:
    return Kind(api_version, kind, plural_of(kind))


def cluster_scoped(api_version: str, kind: str) -> Kind:
    return Kind(api_version, kind, plural_of(kind), namespaced=False)


NAMESPACE = cluster_scoped("v1", "Namespace")
SECRET = namespaced("v1", "Secret")
EVENT = namespaced("v1", "Event")
CLUSTER_ROLE = cluster_scoped("rbac.authorization.k8s.io/v1", "ClusterRole")
ROLE = namespaced("rbac.authorization.k8s.io/v1", "Role")
ROLE_BINDING = namespaced("rbac.authorization.k8s.io/v1", "RoleBinding")
SUBJECT_ACCESS_REVIEW = cluster_scoped("authorization.k8s.io/v1", "SubjectAccessReview")
DEPLOYMENT = namespaced("apps/v1", "Deployment")
CRD = cluster_scoped("apiextensions.k8s.io/v1", "CustomResourceDefinition")
STORAGE_CLASS = cluster_scoped("storage.k8s.io/v1", "StorageClass")
VALIDATING_WEBHOOK = cluster_scoped(
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"
)

XRD = cluster_scoped("apiextensions.crossplane.io/v2", "CompositeResourceDefinition")
COMPOSITION = cluster_scoped("apiextensions.crossplane.io/v1", "Composition")
COMPOSITION_REVISION = cluster_scoped("apiextensions.crossplane.io/v1", "CompositionRevision")
FUNCTION = cluster_scoped("pkg.crossplane.io/v1", "Function")
FUNCTION_REVISION = cluster_scoped("pkg.crossplane.io/v1", "FunctionRevision")
PROVIDER = cluster_scoped("pkg.crossplane.io/v1", "Provider")
PROVIDER_REVISION = cluster_scoped("pkg.crossplane.io/v1", "ProviderRevision")
CONFIGURATION = cluster_scoped("pkg.crossplane.io/v1", "Configuration")
CONFIGURATION_REVISION = cluster_scoped("pkg.crossplane.io/v1", "ConfigurationRevision")
LOCK = cluster_scoped("pkg.crossplane.io/v1beta1", "Lock")
IMAGE_CONFIG = cluster_scoped("pkg.crossplane.io/v1beta1", "ImageConfig")
DEPLOYMENT_RUNTIME_CONFIG = cluster_scoped("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig")
MRD = cluster_scoped("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition")
USAGE = namespaced("protection.crossplane.io/v1beta1", "Usage")
INPUT_CRD_NAME = "inputs.inference.fn.modelplane.ai"

COREWEAVE_CLUSTER_XR = namespaced("infrastructure.modelplane.ai/v1alpha1", "CoreWeaveCluster")
CIVO_CLUSTER_XR = namespaced("infrastructure.modelplane.ai/v1alpha1", "CivoCluster")

COREWEAVE_PROVIDER_CONFIG = cluster_scoped(
    "coreweave.m.crossplane.io/v1beta1", "ClusterProviderConfig"
)
COREWEAVE_VPC = namespaced("networking.coreweave.m.crossplane.io/v1alpha1", "VPC")
CKS_CLUSTER = namespaced("cks.coreweave.m.crossplane.io/v1alpha1", "Cluster")
CKS_NODEPOOL = cluster_scoped("compute.coreweave.com/v1alpha1", "NodePool")

KUBERNETES_PROVIDER_CONFIG = namespaced("kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig")
KUBERNETES_OBJECT = namespaced("kubernetes.m.crossplane.io/v1alpha1", "Object")

CIVO_PROVIDER_CONFIG = cluster_scoped("civo.m.upbound.io/v1beta1", "ClusterProviderConfig")
CIVO_NETWORK = namespaced("vpc.civo.m.upbound.io/v1beta1", "Network")
CIVO_FIREWALL = namespaced("vpc.civo.m.upbound.io/v1beta1", "Firewall")
CIVO_CLUSTER = namespaced("kubernetes.civo.m.upbound.io/v1beta1", "Cluster")
CIVO_NODEPOOL = namespaced("kubernetes.civo.m.upbound.io/v1beta1", "NodePool")
HELM_PROVIDER_CONFIG = namespaced("helm.m.crossplane.io/v1beta1", "ProviderConfig")
HELM_RELEASE = namespaced("helm.m.crossplane.io/v1beta1", "Release")

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
