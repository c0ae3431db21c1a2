"""Which model a run evaluates: the registry of declarative entries, family detection, resolving what the user gave
(registry name, Hub id, folder, Python encoder) to a loader, and the identity every output and the cache name it by.
"""
