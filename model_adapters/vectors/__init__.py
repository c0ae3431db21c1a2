"""Vectors for the plan's distinct items: batched encoding, the on-disk embedding cache and the checks that guard it,
several processes through accelerate, and what a re-run on an unchanged folder need not compute again.
"""
