"""The library versions a fixture driver ran under, for the fixture's `versions` (tests/fixtures/*/NOTE.md)."""

from importlib import metadata

PACKAGES = ("transformers", "torch", "tokenizers", "pillow", "qwen-vl-utils")


def versions() -> dict:
    """{package: version} of PACKAGES installed in the running environment."""
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out
