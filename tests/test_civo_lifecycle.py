"""A CivoCluster over its life: several reconciles with evolving observed state."""

from __future__ import annotations

from harness.fixtures import (
    World,
    civo_connection_secret,
    civo_xr,
    conditions,
    desired,
    readiness,
    results,
    xr_status,
)
from tests import civo_expected as expected

SECRETS = {"secrets": [{"type": "Kubeconfig", "name": expected.SECRET_NAME, "key": "kubeconfig"}]}


def test_civo_cluster_lifecycle() -> None:
    world = World(civo_xr())

    # 1. New: network, firewall and the cluster with its inline System pool; pools wait.
    rsp = world.reconcile()
    assert desired(rsp) == expected.base()
    assert not any(readiness(rsp).values())
    waiting = (
        'waiting for Civo cluster "inference-lon-34d99" to become Ready before adding node '
        "pools l40s, a100"
    )
    assert results(rsp) == [("Normal", waiting)]
    assert conditions(rsp) == {
        "ClusterAccess": (
            "False",
            "WaitingForCluster",
            'waiting for Civo cluster "inference-lon-34d99" to be created; it writes its '
            f'kubeconfig to Secret "{expected.SECRET_NAME}"',
        ),
        "NodePools": ("False", "WaitingForCluster", waiting),
    }
    assert xr_status(rsp) == {}

    # 2. Cluster Ready: the other pools; the autoscaler waits for the autoscaled pool's ID.
    world.ready("network", atProvider={"id": "1d3e-net"})
    world.ready("firewall", atProvider={"id": "8c2a-fw"})
    world.ready(
        "civo-cluster", atProvider={"id": "5f0b-cluster", "apiEndpoint": "https://74.220.1.2:6443"}
    )
    world.ready("usage-network-by-cluster")
    world.ready("usage-firewall-by-cluster")
    # The provider writes the connection Secret on create; the function reads it to find the
    # key that holds the kubeconfig.
    world.cluster_objects = [civo_connection_secret("kubeconfig")]
    rsp = world.reconcile()
    assert desired(rsp) == {
        **expected.base(),
        "nodepool-l40s": expected.l40s_pool(),
        "nodepool-a100": expected.A100_POOL,
    }
    assert xr_status(rsp) == SECRETS
    assert conditions(rsp)["ClusterAccess"] == (
        "True",
        "Available",
        f'kubeconfig in Secret "{expected.SECRET_NAME}", key "kubeconfig"',
    )
    pending = "waiting for the Civo pool IDs of autoscaled pools l40s"
    assert results(rsp) == [("Normal", pending)]
    assert conditions(rsp)["Autoscaler"] == ("False", "WaitingForPoolIDs", pending)
    # From now on the key is known from the XR's status: the Secret is not read again.
    world.cluster_objects = []

    # 3. Pool IDs observed: helm ProviderConfig and the cluster-autoscaler with its group.
    annotations = world.observed["nodepool-l40s"]["metadata"]["annotations"]
    annotations["crossplane.io/external-name"] = "a7c1e0f2-l40s"
    world.ready("nodepool-l40s", atProvider={"id": "a7c1e0f2-l40s", "nodeCount": 3})
    world.ready("nodepool-a100", atProvider={"id": "b9d4-a100", "nodeCount": 1})
    rsp = world.reconcile()
    assert desired(rsp) == expected.converged()
    assert results(rsp) == []
    assert conditions(rsp)["Autoscaler"] == ("True", "Available", "cluster-autoscaler scales l40s")
    world.ready("cluster-autoscaler")
    world.report("helm-providerconfig")
    rsp = world.reconcile()
    assert all(readiness(rsp).values()), readiness(rsp)
    converged = desired(rsp)

    # 4. Ready flap: the cluster loses Ready. Nothing is dropped.
    world.ready("civo-cluster", ready=False, atProvider={"id": "5f0b-cluster"})
    rsp = world.reconcile()
    assert desired(rsp) == converged
    assert readiness(rsp)["civo-cluster"] is False
    assert xr_status(rsp) == SECRETS
    world.ready("civo-cluster", atProvider={"id": "5f0b-cluster"})

    # 5. The inline System pool edited: the live pool stays as created, with a Warning.
    world.xr["spec"]["nodePools"][0].update(size="g4s.kube.large", nodeCount=3)
    rsp = world.reconcile()
    assert desired(rsp) == converged
    assert results(rsp) == [
        (
            "Warning",
            'spec.nodePools[0]: the inline System pool "system" is created with the cluster and '
            'kept as it is (size "g4s.kube.medium", nodeCount 2); edits to it are not applied. '
            "For more system capacity, add another System pool.",
        )
    ]
    world.xr["spec"]["nodePools"][0].update(size="g4s.kube.medium", nodeCount=2)

    # 6. The last autoscaled pool made fixed: it gets a fixed count again and the release keeps
    # running with no node groups, so no autoscaler acts on stale pools.
    del world.xr["spec"]["nodePools"][1]["minNodeCount"]
    del world.xr["spec"]["nodePools"][1]["maxNodeCount"]
    rsp = world.reconcile()
    made_fixed = {
        **converged,
        "nodepool-l40s": expected.l40s_pool(autoscaled=False),
        "cluster-autoscaler": expected.autoscaler([]),
    }
    assert desired(rsp) == made_fixed
    assert conditions(rsp)["Autoscaler"] == (
        "True",
        "NoAutoscaledPools",
        "no pool autoscales; the cluster-autoscaler release runs with no node groups",
    )

    # 7. A pool removed from the spec: exactly its NodePool goes.
    del world.xr["spec"]["nodePools"][2]
    rsp = world.reconcile()
    assert desired(rsp) == {k: v for k, v in made_fixed.items() if k != "nodepool-a100"}
    assert results(rsp) == []
