"""ark_dataset package."""
