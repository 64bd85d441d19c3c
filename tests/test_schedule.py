"""The split of the suite among xdist workers (tests/fixtures/schedule.py), against its rules:
every test once, the tests that stay together on one worker in file order, queues longest
first, and no queue longer than the fair share plus the longest unit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.profile import budget
from tests.fixtures.schedule import blocks, cost, split

NODEIDS = st.lists(
    st.tuples(
        st.sampled_from(
            ["tests/app/a.py::t", "tests/e2e/b.py::t", "tests/e2e/test_ui_e2e.py::t"]
            + ["tests/e2e/c.py::t[cluster]", "tests/app/test_openapi.py::t"]
        ),
        st.floats(min_value=0, max_value=300),
        st.booleans(),  # recorded or not
    ),
    min_size=0,
    max_size=60,
)


@budget(300)
@given(tests=NODEIDS, workers=st.integers(min_value=1, max_value=6))
def test_the_split_keeps_its_rules(tests: list[tuple[str, float, bool]], workers: int) -> None:
    nodeids = [f"{prefix}{i}" for i, (prefix, _, _) in enumerate(tests)]
    known = {n: seconds for n, (_, seconds, kept) in zip(nodeids, tests, strict=True) if kept}
    queues = split(nodeids, workers, known)

    assert len(queues) == workers
    assert sorted(i for q in queues for i in q) == list(range(len(nodeids)))
    units = blocks(nodeids)
    for unit in (u for u in units if len(u) > 1):
        [queue] = [q for q in queues if unit[0] in q]
        start = queue.index(unit[0])
        assert queue[start : start + len(unit)] == unit  # together, in file order
    for queue in queues:
        singles = [cost(nodeids[i], known) for i in queue if [i] in units]
        assert singles == sorted(singles, reverse=True)
    weights = [sum(cost(nodeids[i], known) for i in unit) for unit in units]
    loads = [sum(cost(nodeids[i], known) for i in q) for q in queues]
    assert max(loads, default=0) <= sum(weights) / workers + max(weights, default=0) + 1e-6
