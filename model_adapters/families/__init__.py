"""Model families: one module per way of turning docs/protocol.md §3 inputs into vectors (or pair scores).

Each module exposes `load(entry, path, *, device, dtype) -> Encoder` (and `load_reranker` for pairwise scorers),
named by its row of `model_adapters.models.family_table`.
Heavy libraries (torch, transformers, sentence-transformers) are imported inside these modules only.
"""
