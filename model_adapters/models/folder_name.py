"""The name a local model folder gives itself: its model card's, else the folder's own name.

The model card is the folder's README.md. Its metadata's `model_name`, or the first `model-index` entry's `name`,
names the model; else a title line `# NAME` that is one word, as Hub cards begin (`# all-MiniLM-L6-v2`). A title
with spaces describes rather than names (`# SentenceTransformer based on ...`), and is not used. Nor is config.json's
`_name_or_path`: a fine-tuned model keeps its base model's there, so it would show a model that did not produce the
vectors.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Final

CARD: Final = "README.md"
MAX_CARD_BYTES: Final = 1 << 20  # a model card larger than this is not read
TITLE: Final = re.compile(r"^# +(\S+)\s*$", re.M)  # a one-word level-1 heading


def folder_name(folder: str, taken: Any = lambda name: False) -> str:
    """Return the name of the model in `folder`: its card's, else the folder's basename.

    Args:
        folder: the model folder.
        taken: says whether a name belongs to another model (a registry name): such a card name is not used.
    """
    name = card_name(folder)
    return name if name is not None and not taken(name) else os.path.basename(os.path.normpath(folder))


def card_name(folder: str) -> str | None:
    """Return the model name that `folder`'s model card gives, or None when it gives none."""
    path = Path(folder) / CARD
    try:
        if path.stat().st_size > MAX_CARD_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    meta, body = _front_matter(text)
    index = meta.get("model-index")
    first = index[0] if isinstance(index, list) and index and isinstance(index[0], dict) else {}
    for value in (meta.get("model_name"), first.get("name")):
        if isinstance(value, str) and _usable(value):
            return value.strip()
    title = TITLE.search(body)
    return title.group(1) if title is not None and _usable(title.group(1)) else None


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The card's YAML metadata block (between `---` lines at its top) and the text after it."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    import yaml

    try:
        meta = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        meta = None
    return (meta if isinstance(meta, dict) else {}), text[end + 4 :]


def _usable(name: str) -> bool:
    """One line, not too long, and no file path (an `ORG/NAME` Hub id is a name)."""
    name = name.strip()
    return 0 < len(name) <= 100 and "\n" not in name and "\\" not in name and not name.startswith(("/", ".", "~"))
