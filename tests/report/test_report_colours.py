"""Agent colours: by name, the same from page to page, distinct within a page."""

from __future__ import annotations

import itertools

from ltm_harness._report.colours import PALETTE, agent_slots, home_slot, preferences


def test_a_name_has_the_same_colour_in_any_order_and_with_unrelated_agents():
    names = ["oracle", "retrieval", "recent:1000", "null", "openai:gpt-4o"]
    base = dict(zip(names, agent_slots(names)))
    for order in itertools.permutations(names):
        assert dict(zip(order, agent_slots(list(order)))) == base  # the page's order does not matter
    assert len(set(base.values())) == len(names)
    # oracle and retrieval both rank the same colour first: oracle (first by name) has it, retrieval its next one;
    # every other agent has its own first colour, as when it is alone in a page.
    assert preferences("oracle")[0] == preferences("retrieval")[0] == base["oracle"]
    assert base["retrieval"] == preferences("retrieval")[1]
    for name in ("recent:1000", "null", "openai:gpt-4o"):
        assert base[name] == home_slot(name) == agent_slots([name])[0]


def test_the_same_name_twice_and_more_agents_than_colours():
    slots = agent_slots(["retrieval", "null", "retrieval"])
    assert slots[0] == home_slot("retrieval") and len(set(slots)) == 3  # the second retrieval takes another colour
    assert slots[2] == next(s for s in preferences("retrieval") if s not in slots[:2])
    many = [f"agent-{i}" for i in range(len(PALETTE) + 3)]
    slots = agent_slots(many)
    assert set(slots) == set(range(len(PALETTE)))  # every colour used before any repeats
    assert all(0 <= s < len(PALETTE) for s in slots)
    assert sorted(preferences("x")) == list(range(len(PALETTE)))
