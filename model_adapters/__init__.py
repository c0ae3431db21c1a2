"""model_adapters package."""
