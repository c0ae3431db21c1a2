"""spaces_app package."""
