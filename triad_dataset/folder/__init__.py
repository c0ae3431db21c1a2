"""A built dataset folder: writing and reading it (`io`), its card, audit, validation, strata and publishing.

Above `contract`; beside `sources`; below `tracks` and `editions`, which write folders through it.
"""
