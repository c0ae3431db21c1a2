"""ARK's text-space track (paper §4.1 "text retrievers", 4.3, H.1): image captioners, query rewriters, the caption
cache (the hook that puts a caption into a text-only model's input is `planning.textspace.apply_caption`: the
run plan reads captions tables, the captioners only write them).

- `protocol`: the `Captioner` and `Rewriter` interfaces (typing.Protocol; any object with the method works);
- `registry`: one declarative entry per captioner / rewriter (the model registry's style);
- `ocr`: the offline OCR captioner (rapidocr + onnxruntime); `generation`: VLM captioners and LLM rewriters
  through transformers generation;
- `cache`: captions keyed by captioner identity + sha256 of the image bytes; `caption`: `triad caption`;
  `rewrite`: `triad rewrite`.
"""
