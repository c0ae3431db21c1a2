"""The Space's configuration, all from environment variables (so a Hugging Face Space sets them in its settings)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TRIAD = "demo_output/triad"  # the mini edition `make demo` builds (CONTRACTS: demo layout)
DEFAULT_ARK = "demo_output/ark"
DEFAULT_DB = "demo_output/space.sqlite"
DEFAULT_PORT = 7860
DEFAULT_HOST = "127.0.0.1"


@dataclass(frozen=True)
class Settings:
    """TRIAD_SPACE_DATA, TRIAD_SPACE_ARK_DATA, TRIAD_SPACE_DB, TRIAD_SPACE_ADMIN_TOKEN, GRADIO_SERVER_PORT/NAME,
    OAUTH_CLIENT_ID (set by Hugging Face on a Space with login enabled)."""

    triad_dir: Path
    ark_dir: Path
    db_path: Path
    admin_token: str | None
    port: int
    host: str
    oauth: bool = False  # Hugging Face login: a Space (SPACE_ID) with `hf_oauth: true` (OAUTH_CLIENT_ID)

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            triad_dir=Path(env.get("TRIAD_SPACE_DATA") or DEFAULT_TRIAD),
            ark_dir=Path(env.get("TRIAD_SPACE_ARK_DATA") or DEFAULT_ARK),
            db_path=Path(env.get("TRIAD_SPACE_DB") or DEFAULT_DB),
            admin_token=env.get("TRIAD_SPACE_ADMIN_TOKEN") or None,
            port=int(env.get("GRADIO_SERVER_PORT") or DEFAULT_PORT),
            host=env.get("GRADIO_SERVER_NAME") or DEFAULT_HOST,
            oauth=bool(env.get("OAUTH_CLIENT_ID") and env.get("SPACE_ID")),
        )
