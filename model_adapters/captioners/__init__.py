"""ARK's text-space track (paper §4.1 "text retrievers", 4.3, H.1): image captioners, query rewriters, the caption
cache, and the one hook that puts a caption into a text-only model's input (`textspace.apply_caption`).

- `protocol`: the `Captioner` and `Rewriter` interfaces (typing.Protocol; any object with the method works);
- `registry`: one declarative entry per captioner / rewriter (the model registry's style);
- `ocr`: the offline OCR captioner (rapidocr + onnxruntime); `generation`: VLM captioners and LLM rewriters
  through transformers generation (and their tiny random test versions);
- `cache`: captions keyed by captioner identity + sha256 of the image bytes; `caption`: `triad caption`;
  `rewrite`: `triad rewrite`; `textspace`: reading a captions table and the caption-then-embed hook.
"""
