"""Data files of triad_dataset (the compact WordNet 3.0 noun graph, its licence, the abstraction blacklist)."""
