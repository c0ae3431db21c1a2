"""What a run reads from a dataset folder and must encode: the configs it covers, model inputs from rows, image bytes
streamed from the shards, the columnar plan of distinct items and pools, the text-truncation report, and ARK text-space captions (`textspace`: reading a `triad caption`
table and the caption-then-embed hook).
"""
