"""Generators of the synthetic ARK mini edition, one module per subtype.

Each module exposes `generate(seed, n_queries) -> Generated` with the structured facts behind every query and gallery
item, and `violations(query_facts, item_facts) -> frozenset` so tests can check by program that the positive satisfies
every fact of its query and each hard negative violates exactly the intended one.
"""
