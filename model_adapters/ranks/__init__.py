"""From vectors to results: ranking pools (TRIAD) and galleries (ARK), the rerank splice, scoring, and the rankings
parquet files and results.json a run writes.
"""
