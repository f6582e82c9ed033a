"""The function is installed the way users install it: a package pushed to a registry, named by
a Function, pulled and unpacked by Crossplane's package manager, which accepts the package's
spec.crossplane.version constraint. Crossplane before v2.2 also installs the step-input CRD the
package carries; v2.2 and later install nothing from a Function package."""

from __future__ import annotations

import pytest

from harness.e2e import kinds
from harness.e2e.kube import is_true
from harness.e2e.runtime import FUNCTION_NAME
from harness.e2e.suite import Suite


@pytest.mark.every_engine
def test_package_manager_installed_the_function(suite: Suite) -> None:
    api = suite.plane.api
    function = api.get(kinds.FUNCTION, FUNCTION_NAME)
    assert function is not None
    assert function["spec"]["package"] == suite.runtime.reference
    assert suite.runtime.reference.startswith(f"127.0.0.1:{suite.plane.registry_port}/")
    assert is_true(function, "Installed") and is_true(function, "Healthy")

    revisions = api.list(
        kinds.FUNCTION_REVISION, labels=f"pkg.crossplane.io/package={FUNCTION_NAME}"
    )
    assert [r["spec"]["image"] for r in revisions] == [suite.runtime.reference]
    assert is_true(revisions[0], "RevisionHealthy") and is_true(revisions[0], "RuntimeHealthy")
    assert revisions[0]["status"]["endpoint"] == f"dns:///127.0.0.1:{suite.runtime.port}"

    input_crd = api.get(kinds.CRD, kinds.INPUT_CRD_NAME)
    if suite.engine.installs_function_package_crds:
        # The step-input CRD came out of the package, installed and owned by the revision.
        assert input_crd is not None and is_true(input_crd, "Established")
        owners = [o["kind"] for o in input_crd["metadata"].get("ownerReferences", [])]
        assert "FunctionRevision" in owners
    else:
        assert input_crd is None, (
            f"{suite.engine.label} installed the step-input CRD from the Function package"
        )
