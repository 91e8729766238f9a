"""The bootstrap's memory budget."""


def test_default_memory_budget_is_clamped():
    from medeval.metrics.bootstrap import default_memory_budget

    assert 2**26 <= default_memory_budget("cpu") <= 2**31
