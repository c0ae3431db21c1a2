"""Model adapters and the evaluation runner (`triad run`).

- `model_adapters.protocol`: the `Encoder` / `Reranker` protocols and `ModelInput`.
- `model_adapters.registry`: one declarative `ModelEntry` per model; `get_entry`, `load_encoder`, `load_reranker`.
- `model_adapters.inputs`: docs/protocol.md §3 model inputs from rows, the query-side input variants, input keys.
- `model_adapters.cache`: the on-disk embedding cache.
- `model_adapters.ranking`: batched pool / gallery ranking and the rerank splice.
- `model_adapters.runner`: `run(RunConfig) -> dict`. See docs/runner.md.
"""
