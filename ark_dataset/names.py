"""Every public name of ARK, defined once (SPEC §5, ARK paper)."""

from __future__ import annotations

from typing import Final

# knowledge domain -> subtypes (snake_case config names)
DOMAIN_SUBTYPES: Final = {
    "visual_cognition": ("daily_life", "fine_grained", "spatial_cogmap", "spatial_3d"),
    "natural_science": ("biology", "physics", "chemistry"),
    "formal_science": ("mathematics", "code_drawing"),
    "humanities_social_science": ("economics", "comic", "art", "calendar", "metro"),
    "engineering_technology": ("computer_science", "mechanical", "electronics"),
}
SUBTYPES: Final = tuple(s for subs in DOMAIN_SUBTYPES.values() for s in subs)
SUBTYPE_DOMAIN: Final = {s: d for d, subs in DOMAIN_SUBTYPES.items() for s in subs}
DOMAINS: Final = tuple(DOMAIN_SUBTYPES)
GALLERY_SUFFIX: Final = "_gallery"
GALLERY_CONFIGS: Final = tuple(f"{s}{GALLERY_SUFFIX}" for s in SUBTYPES)
ALL_CONFIGS: Final = SUBTYPES + GALLERY_CONFIGS
SPLIT: Final = "test"

COGNITIVE_DEMANDS: Final = ("perception_only", "knowledge_intensive", "reasoning_intensive", "both")
REASONING_SKILLS: Final = (
    "knowledge", "spatial", "logical", "symbolic", "fine_grained_visual", "conceptual_abstraction",
)
MODALITIES: Final = ("text", "image", "text_image")
RERANK_TOP_K: Final = 50
