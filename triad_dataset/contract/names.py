"""Every public name of TRIAD, defined once (docs/protocol.md §1-§3).

Config names, candidate roles, profiles, session types, split name and the serialization templates live here
and are imported everywhere else. Tests check that nothing else spells them by hand.
"""

from __future__ import annotations

from typing import Final

# --- configs (docs/protocol.md §1) -------------------------------------------------------------------------------------
DOMAINS: Final = ("fashion", "cars")

ABSTRACTION_CONFIGS: Final = ("abstraction_i2c", "abstraction_c2i")
CONSTRAINTS_CONFIGS: Final = tuple(f"constraints_{d}" for d in DOMAINS)
STATE_CONFIGS: Final = tuple(f"state_{d}" for d in DOMAINS)
MAIN_CONFIGS: Final = ABSTRACTION_CONFIGS + CONSTRAINTS_CONFIGS + STATE_CONFIGS
SELF_CONFIGS: Final = ("self_i2c", "self_c2i")
SAME_CONFIGS: Final = tuple(f"same_{d}" for d in DOMAINS)
REFERENCE_CONFIGS: Final = SELF_CONFIGS + SAME_CONFIGS
TASK_CONFIGS: Final = MAIN_CONFIGS + REFERENCE_CONFIGS

CONCEPTS_CORPUS: Final = "abstraction_concepts"
INSTANCES_CORPUS: Final = "abstraction_instances"
DOMAIN_CORPUS: Final = {d: f"{d}_items" for d in DOMAINS}
CORPUS_CONFIGS: Final = (CONCEPTS_CORPUS, INSTANCES_CORPUS) + tuple(DOMAIN_CORPUS.values())
ALL_CONFIGS: Final = TASK_CONFIGS + CORPUS_CONFIGS

# Which corpus the candidate ids (and the query image id) of each task config point into.
CANDIDATE_CORPUS: Final = {
    "abstraction_i2c": CONCEPTS_CORPUS,
    "abstraction_c2i": INSTANCES_CORPUS,
    "self_i2c": CONCEPTS_CORPUS,
    "self_c2i": INSTANCES_CORPUS,
    **{f"constraints_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
    **{f"state_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
    **{f"same_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
}
QUERY_IMAGE_CORPUS: Final = {
    "abstraction_i2c": INSTANCES_CORPUS,
    "abstraction_c2i": None,
    "self_i2c": INSTANCES_CORPUS,
    "self_c2i": None,
    **{f"constraints_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
    **{f"state_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
    **{f"same_{d}": DOMAIN_CORPUS[d] for d in DOMAINS},
}
# Short labels used in tables (paper Table 2 column names).
DISPLAY_NAMES: Final = {
    "abstraction_i2c": "I2C",
    "abstraction_c2i": "C2I",
    "constraints_fashion": "B-Fashion",
    "constraints_cars": "B-Cars",
    "state_fashion": "C-Fashion",
    "state_cars": "C-Cars",
    "self_i2c": "Self-I2C",
    "self_c2i": "Self-C2I",
    "same_fashion": "Same-Fashion",
    "same_cars": "Same-Cars",
}
SPLIT: Final = "test"  # every config has one split

# --- candidate roles (docs/protocol.md §1, paper Table 7) ---------------------------------------------------------------
POSITIVE: Final = "positive"
SIBLING: Final = "sibling"
P_VIOLATION: Final = "p_violation"
N_VIOLATION: Final = "n_violation"
PN_VIOLATION: Final = "pn_violation"
IMPLICIT_VIOLATION: Final = "implicit_violation"
VISUAL: Final = "visual"
RANDOM: Final = "random"
CONFLICT_TRAP: Final = "conflict_trap"
ROLES: Final = (
    POSITIVE,
    SIBLING,
    P_VIOLATION,
    N_VIOLATION,
    PN_VIOLATION,
    IMPLICIT_VIOLATION,
    VISUAL,
    RANDOM,
    CONFLICT_TRAP,
)
NEGATIVE_ROLES: Final = tuple(r for r in ROLES if r != POSITIVE)

# --- constraints profiles (docs/protocol.md §2, paper A.2): name -> (#positive, #negative conditions) ------------------
PROFILES: Final = {"D1": (1, 0), "D2": (0, 1), "D3": (2, 0), "D4": (0, 2), "D5": (1, 1), "D6": (2, 1), "D7": (1, 2)}
PROFILE_MIX_PER_1000: Final = {"D1": 175, "D2": 125, "D3": 175, "D4": 125, "D5": 150, "D6": 125, "D7": 125}
POLARITIES: Final = ("P", "N")
# Typed-negative quotas p/n/pn/implicit per domain (paper A.2).
NEGATIVE_QUOTAS: Final = {
    "fashion": {P_VIOLATION: 8, N_VIOLATION: 8, PN_VIOLATION: 8, IMPLICIT_VIOLATION: 4},
    "cars": {P_VIOLATION: 5, N_VIOLATION: 5, PN_VIOLATION: 3, IMPLICIT_VIOLATION: 3},
}
ATTRIBUTE_ROLES: Final = ("constraint", "modifiable", "non_constraint_hard")
# Key that scoring reads for the paper's C.3 strata (added to gold rows by triad_dataset.folder.strata; not a column).
REFERENCE_CATEGORY: Final = "reference_category"

# --- state sessions (docs/protocol.md §2, paper A.3) -------------------------------------------------------------------
SESSION_TYPES: Final = ("natural", "conflict")
# (session type, turns, source condition count) -> sessions per 1,000
SESSION_MIX_PER_1000: Final = {
    ("conflict", 2, 1): 300,
    ("conflict", 3, 2): 225,
    ("natural", 2, 2): 225,
    ("natural", 3, 3): 250,
}
STATE_SEED: Final = 42
SAME_QUERIES: Final = 500
POOL_SIZE: Final = 1000
I2C_MAX_POSITIVES: Final = 5
C2I_POSITIVES: Final = 5

# --- serialization (docs/protocol.md §3, paper B.3) --------------------------------------------------------------------
I2C_INSTRUCTION: Final = "Retrieve the text description of the concept category this image and text belong to."
C2I_INSTRUCTION: Final = "Retrieve images that are instances of the described concept category."
CONSTRAINTS_QUERY_TEMPLATE: Final = "Reference product info: {reference_attributes}. User query: {query_text}"
STATE_QUERY_PREFIX: Final = "Reference product info: {reference_attributes}. User conversation: "
STATE_TURN_TEMPLATE: Final = "[Round {index}] User: {turn}"
CANDIDATE_TEMPLATE: Final = "Product info: {candidate_attributes}"
CONCEPT_TEMPLATE: Final = "{name}. {definition}"
# Self reference task (paper A.1, B.3): concept text is the definition only; these leaf-concept items get their own
# ids in abstraction_concepts so the full "{name}. {definition}" item of the same synset can coexist.
SELF_CONCEPT_TEMPLATE: Final = "{definition}"
SELF_CONCEPT_ID_TEMPLATE: Final = "{wnid}#def"
VISIBLE_PRODUCT_FIELDS: Final = {"fashion": ("gender", "brand", "year", "season"), "cars": ("brand", "year")}
# Visible product fields are serialized as "field: value" pairs joined by ", " in the order above.
FIELD_TEMPLATE: Final = "{field}: {value}"
FIELD_SEPARATOR: Final = ", "
# Same reference task: six fixed templates per domain, assigned cyclically in construction order (paper B.3).
SAME_TEMPLATES: Final = {
    "fashion": (
        "Find the exact same item as shown in the picture.",
        "I want this exact product — find it for me.",
        "Looking for this identical piece, the very same one.",
        "Show me this same item, not a similar one — the same.",
        "Need to find the exact match of what’s in this photo.",
        "Find me this one — identical product, same everything.",
    ),
    "cars": (
        "Find this exact same car as shown in the picture.",
        "I want this very car — the identical one.",
        "Looking for exactly this car, the same one.",
        "Show me this same vehicle, not a similar one.",
        "Need to find the exact match of the car in this photo.",
        "Find me this one — the identical car.",
    ),
}
# Outer wrapper of VLM embedders that use one (paper B.3, Qwen3-VL-Embedding).
VLM_OUTER_INSTRUCTION: Final = "Represent the user's input."
# The benchmark-level instruction each task config's queries carry (paper B.3); the other configs carry none.
TASK_INSTRUCTION: Final = {
    "abstraction_i2c": I2C_INSTRUCTION,
    "self_i2c": I2C_INSTRUCTION,
    "abstraction_c2i": C2I_INSTRUCTION,
    "self_c2i": C2I_INSTRUCTION,
}
