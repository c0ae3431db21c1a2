"""triad_dataset package."""
