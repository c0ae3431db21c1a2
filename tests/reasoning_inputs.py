"""The fixed inputs on which Embed-RL's T-CoT code was run (tests/fixtures/embed_rl_tcot/NOTE.md) and our adapter is
compared with it: T-CoT requests (who gets which prompt, with or without the image) and T-CoT texts as the
embedder reads them (boxes kept, dropped by the authors' limits and clamped; malformed JSON; no thinking block).
Plain data, imported by the tests and by the scratch script that ran the authors' code (images: reference_inputs).
"""

from __future__ import annotations

from tests.reference_inputs import C2I, CANDIDATE, CONSTRAINT_QUERY, I2C, STATE_QUERY

# (role, text, image kind or None, instruction or None)
REQUEST_CASES: list[tuple[str, str, str | None, str | None]] = [
    ("query", "sparrow", "wide", I2C),  # I2C query: image + text + instruction -> PROMPT_IMAGE_WITHOUT_ANSWER
    ("query", "leaf 17. a small perching bird", None, C2I),  # C2I query -> PROMPT_TEXT_WITHOUT_ANSWER
    ("query", CONSTRAINT_QUERY, "square", None),  # constraints query, no instruction
    ("query", STATE_QUERY, None, None),  # text only, no instruction
    ("query", "", "small", None),  # image only, no question: the script generates nothing
    ("candidate", CANDIDATE, None, None),  # text candidate -> PROMPT_POS_TEXT
    ("candidate", CANDIDATE, "rgba", None),  # image + text candidate: its paired mode -> PROMPT_IMAGE_WITHOUT_ANSWER
    ("candidate", "", "square", None),  # image alone -> PROMPT_POS_IMAGE ("Retrieve the corresponding image.")
    ("candidate", "  a padded concept  ", None, None),  # stripped
    ("candidate", "", None, None),  # nothing: not collected, nothing generated
]

_BOXES = (
    'Let me look.\n<thinking>The car at [100, 100, 600, 800]. {"bbox_2d": [[100, 100, 600, 800], [0, 0, 30, 50], '
    "[500, 200, 1200, 1100], [10, 20, 30]]}</thinking>\n<rethink>The boxes show the car.</rethink>\n"
    "<answer>A red car.</answer>"
)
# (name, text, image kind or None, instruction or None, T-CoT text or None)
TCOT_CASES: list[tuple[str, str, str | None, str | None, str | None]] = [
    # text before the block dropped; a box kept, one below 10 px dropped, one clamped to the image, a short one skipped
    ("boxes", CANDIDATE, "wide", None, _BOXES),
    (
        "image_only_box",
        "",
        "square",
        None,
        '<thinking>Centre. {"bbox_2d": [[250, 250, 750, 750]]}</thinking><answer>A square.</answer>',
    ),
    (
        "keywords",
        "leaf 17. a small perching bird",
        None,
        C2I,
        '<thinking>Key concepts. {"text_keywords": ["bird", "perching"]}</thinking>\n<rethink>Birds.</rethink>\n'
        "<answer>An image of a small perching bird.</answer>",
    ),
    (
        "text_with_box",
        "sparrow",
        None,
        I2C,
        '<thinking>{"bbox_2d": [[0, 0, 500, 500]]}</thinking><answer>A bird.</answer>',
    ),
    ("malformed", "sparrow", "wide", I2C, '<thinking>Look at {"bbox_2d": [[10, 20, 30, }</thinking><answer>x</answer>'),
    ("no_thinking", CONSTRAINT_QUERY, "square", None, "The image shows a square shoe. <answer>A square</answer>"),
    (
        "thinking_no_json",
        STATE_QUERY,
        "wide",
        None,
        "<thinking>Nothing to locate here.</thinking>\n<answer>Plain.</answer>",
    ),
    ("empty", CANDIDATE, "square", None, ""),
    (
        "rgba_box",
        CANDIDATE,
        "rgba",
        None,
        '<thinking>{"bbox_2d": [[0, 0, 500.7, 500.2], [500, 500, 1000, 1000]]}</thinking>',
    ),
    (
        "large_aspect",
        "",
        "large",
        None,
        '<thinking>Banner. {"bbox_2d": [[0, 0, 1000, 8], [100, 100, 400, 300]]}</thinking>\n<answer>A banner.</answer>',
    ),
    ("empty_input", "", None, None, "<thinking>x</thinking>"),
    (
        "nested_single",
        "sparrow",
        "wide",
        I2C,
        '<thinking>One bird. {"bbox_2d": [[120, 200, 700, 900]]}</thinking>\n<answer>A bird.</answer>',
    ),
]
# The prompt's own format for one element (a flat box): the authors' loop raises TypeError on it; ours crops it as one
# box, which must equal the authors' result for the nested form (`nested_single`).
FLAT_CASE = (
    "flat_single",
    "sparrow",
    "wide",
    I2C,
    '<thinking>One bird. {"bbox_2d": [120, 200, 700, 900]}</thinking>\n<answer>A bird.</answer>',
)
