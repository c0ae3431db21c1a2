"""Where images and labels come from: WordNet, image folders, product catalogs, synthetic catalogs, rendering.

Above `contract`; imports nothing of `tracks`, `editions` or `folder`.
"""
