"""Tiny UME-R1 checkpoints whose chat templates put `<disc_emb>` in the last positions of the prompt.

UME-R1's eval (`get_disc_embedding_idx` of src/eval/VLM2Vec/eval_twomode.py) pools at the last `<disc_emb>`, but
reads the last position instead when that token is among the last two positions of the (left-padded) row. With the
real Qwen2-VL template the generation prompt always follows the marker, so the rule never fires there; these
templates (the Qwen2-VL template's content loop without role wrappers) make it fire, or just miss it, on the fixed
inputs of tests/reference_inputs.py. Used by benchmarks/reference/run_ume_r1_tail_official.py (the authors' code)
and tests/models/test_ume_r1_tail_reference.py (our adapter); tests/fixtures/ume_r1_tail/NOTE.md.
"""

from __future__ import annotations

import json
import os
from typing import Final

from tests.doubles import tiny

# The Qwen2-VL template's content loop, collected into one string (so that a filter sees the whole user turn, however
# its text is split into parts), then written out by each section's ending.
_CONTENT: Final = (
    "{% set ns = namespace(text='', images=0) %}{% for message in messages %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set ns.images = ns.images + 1 %}{% set ns.text = ns.text + '<|vision_start|><|image_pad|><|vision_end|>' %}"
    "{% elif 'text' in content %}{% set ns.text = ns.text + content['text'] %}{% endif %}{% endfor %}{% endfor %}"
)


def _template(out: str) -> str:
    return _CONTENT + out


# section -> chat template. The suffix UME-R1 appends is "\n<disc_emb>\n" (one token each).
TAIL_TEMPLATES: Final = {
    # "...\n<disc_emb>": the marker is the last token (eval: -1, the same position)
    "last": _template("{{ ns.text | trim }}"),
    # "...\n<disc_emb>\n": second to last (eval: -1, the last position, not the marker)
    "second_to_last": _template("{{ ns.text }}"),
    # "...\n<disc_emb>\n<|im_end|>": third to last (eval: the marker)
    "third_to_last": _template("{{ ns.text }}<|im_end|>"),
    # rows with an image end as "second_to_last", rows without as "third_to_last": both outcomes in one batch
    "mixed": _template("{{ ns.text }}{% if ns.images == 0 %}<|im_end|>{% endif %}"),
}


def save_tail_checkpoint(section: str, folder: str, seed: int = 0) -> str:
    """Write the tiny UME-R1 checkpoint (`tiny.save_tiny_chat_checkpoint("ume-r1")`) with the chat template of
    `section` in both files a processor reads it from."""
    if section not in TAIL_TEMPLATES:
        raise ValueError(f"unknown section {section!r}; valid: {', '.join(TAIL_TEMPLATES)}")
    tiny.save_tiny_chat_checkpoint("ume-r1", folder, seed)
    template = TAIL_TEMPLATES[section]
    with open(os.path.join(folder, "chat_template.jinja"), "w", encoding="utf-8") as handle:
        handle.write(template)
    with open(os.path.join(folder, "chat_template.json"), "w", encoding="utf-8") as handle:
        json.dump({"chat_template": template}, handle)
    return folder
