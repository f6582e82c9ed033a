"""Every kind the e2e suite reads or writes, with where it lives in the API."""

from __future__ import annotations

from .kube import Kind

NAMESPACE = Kind("v1", "Namespace", namespaced=False)
SECRET = Kind("v1", "Secret")
EVENT = Kind("v1", "Event")
CLUSTER_ROLE = Kind("rbac.authorization.k8s.io/v1", "ClusterRole", namespaced=False)
ROLE = Kind("rbac.authorization.k8s.io/v1", "Role")
ROLE_BINDING = Kind("rbac.authorization.k8s.io/v1", "RoleBinding")
SUBJECT_ACCESS_REVIEW = Kind("authorization.k8s.io/v1", "SubjectAccessReview", namespaced=False)
DEPLOYMENT = Kind("apps/v1", "Deployment")
CRD = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition", namespaced=False)
STORAGE_CLASS = Kind("storage.k8s.io/v1", "StorageClass", namespaced=False)
VALIDATING_WEBHOOK = Kind(
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", namespaced=False
)
VALIDATING_ADMISSION_POLICY = Kind(
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", namespaced=False
)
VALIDATING_ADMISSION_POLICY_BINDING = Kind(
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", namespaced=False
)

XRD = Kind("apiextensions.crossplane.io/v2", "CompositeResourceDefinition", namespaced=False)
COMPOSITION = Kind("apiextensions.crossplane.io/v1", "Composition", namespaced=False)
COMPOSITION_REVISION = Kind(
    "apiextensions.crossplane.io/v1", "CompositionRevision", namespaced=False
)
FUNCTION = Kind("pkg.crossplane.io/v1", "Function", namespaced=False)
FUNCTION_REVISION = Kind("pkg.crossplane.io/v1", "FunctionRevision", namespaced=False)
PROVIDER = Kind("pkg.crossplane.io/v1", "Provider", namespaced=False)
PROVIDER_REVISION = Kind("pkg.crossplane.io/v1", "ProviderRevision", namespaced=False)
CONFIGURATION = Kind("pkg.crossplane.io/v1", "Configuration", namespaced=False)
CONFIGURATION_REVISION = Kind("pkg.crossplane.io/v1", "ConfigurationRevision", namespaced=False)
LOCK = Kind("pkg.crossplane.io/v1beta1", "Lock", namespaced=False)
IMAGE_CONFIG = Kind("pkg.crossplane.io/v1beta1", "ImageConfig", namespaced=False)
DEPLOYMENT_RUNTIME_CONFIG = Kind(
    "pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", namespaced=False
)
MRD = Kind("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", namespaced=False)
USAGE = Kind("protection.crossplane.io/v1beta1", "Usage")
INPUT_CRD_NAME = "inputs.inference.fn.modelplane.ai"

COREWEAVE_CLUSTER_XR = Kind("infrastructure.modelplane.ai/v1alpha1", "CoreWeaveCluster")
CIVO_CLUSTER_XR = Kind("infrastructure.modelplane.ai/v1alpha1", "CivoCluster")

COREWEAVE_PROVIDER_CONFIG = Kind(
    "coreweave.m.crossplane.io/v1beta1", "ClusterProviderConfig", namespaced=False
)
COREWEAVE_VPC = Kind("networking.coreweave.m.crossplane.io/v1alpha1", "VPC")
CKS_CLUSTER = Kind("cks.coreweave.m.crossplane.io/v1alpha1", "Cluster")
CKS_NODEPOOL = Kind("compute.coreweave.com/v1alpha1", "NodePool", namespaced=False)

KUBERNETES_PROVIDER_CONFIG = Kind("kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig")
KUBERNETES_OBJECT = Kind("kubernetes.m.crossplane.io/v1alpha1", "Object")

CIVO_PROVIDER_CONFIG = Kind("civo.m.upbound.io/v1beta1", "ClusterProviderConfig", namespaced=False)
CIVO_NETWORK = Kind("vpc.civo.m.upbound.io/v1beta1", "Network")
CIVO_FIREWALL = Kind("vpc.civo.m.upbound.io/v1beta1", "Firewall")
CIVO_CLUSTER = Kind("kubernetes.civo.m.upbound.io/v1beta1", "Cluster")
CIVO_NODEPOOL = Kind("kubernetes.civo.m.upbound.io/v1beta1", "NodePool")
HELM_PROVIDER_CONFIG = Kind("helm.m.crossplane.io/v1beta1", "ProviderConfig")
HELM_RELEASE = Kind("helm.m.crossplane.io/v1beta1", "Release")

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
