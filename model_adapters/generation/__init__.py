"""The generation stage of a run: text generated for an input before it is embedded (reasoning
embedders: UME-R1 in Gen mode, Embed-RL with T-CoT), with its own identity and cache.

- `records`: the on-disk record cache (JSON values keyed by sha256, atomic checksummed shards) that also holds
  captions (`captioners.cache`) and API rewrites (`captioners.api`);
- `stage`: `GenerationStage` (generate what is not cached, store it, never regenerate a stored generation) and
  `ReasoningAdapter`, which turns a `protocol.ReasoningEncoder` into the plain `Encoder` the runner encodes with.
"""
