"""A pytest plugin that tests/test_ecosystem.py loads into each vendored suite's run (under
torch and through the drop-in alike): the tests listed in SEEDED start from a fixed random
state.

These tests draw unseeded inputs that fail for a small share of draws under torch too: zuko's
adjacency tests build a random adjacency matrix that, about one draw in 500, leaves a null
Jacobian and raises (3 of the seeds 0-1499 under torch). autojit's generator draws torch's
numbers for a seed, so a seeded test sees the same inputs in both runs.

Only listed tests are seeded: seeding every test makes others fail under torch for every seed
tried (pyro's psis_diagnostic bounds, torch_optimizer's RangerQH cases), where their unseeded
runs pass."""

import pytest

SEEDED = {
    "tests/test_flows.py::test_adjacency_matrix",
    "tests/test_flows.py::test_context_adjacency_matrix",
}


@pytest.fixture(autouse=True)
def _fixed_random_state_for_listed_tests(request):
    if request.node.nodeid in SEEDED:
        import torch  # autojit under the drop-in, whose plugin installs it first

        torch.manual_seed(0)
    yield
