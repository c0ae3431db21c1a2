"""The data contract every other part reads: names, the attribute schema, features, serialization, errors.

The lowest layer of triad_dataset: it imports nothing else of the project.
"""
