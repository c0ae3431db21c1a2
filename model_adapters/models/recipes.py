"""Input recipes: how each kind of checkpoint is fed, and how a checkpoint is recognised — one declarative table.

Like transformers' `AutoConfig`, a checkpoint is mapped to the code that runs it through one table; unlike it, the
mapping never guesses. A recipe is accepted for a checkpoint only when the checkpoint's own files match the
recipe's `Match` unambiguously (its Hub id, or model_type + architectures + remote-code flag + special tokens + files);
anything else is refused with what was found and the recipes that exist, and `--recipe NAME` chooses one by hand.

Every recipe except `generic` names the authors' code it was proven equal to (`Reference`: repository, file,
commit and the test that compares our adapter with a fixture made by that code on a tiny model of the same
architecture class). A recipe we cannot feed as its authors do is a row with `refused` set: detecting such a
checkpoint, or asking for it, is one line giving the reason, never an approximation.

The table is data: `model_adapters.models.detect` evaluates `Match`es, a registry entry names the recipe that feeds
it, a recipe names its family (`model_adapters.models.family_table`: the options it may set and the callables that
load it), and the family modules (`model_adapters/families/`) read a recipe's `options`. docs/models.md lists every
row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from model_adapters.families.qwen_chat import ChatOptions
from model_adapters.families.reasoning import options as reasoning_options

# The family names, re-exported: recipes and their readers name families by them.
from model_adapters.models.family_table import API as API
from model_adapters.models.family_table import BIDIRECTIONAL_LLAMA as BIDIRECTIONAL_LLAMA
from model_adapters.models.family_table import DUAL_TOWER as DUAL_TOWER
from model_adapters.models.family_table import FAMILIES as FAMILIES
from model_adapters.models.family_table import QWEN_CHAT as QWEN_CHAT
from model_adapters.models.family_table import REASONING as REASONING
from model_adapters.models.family_table import RERANKER as RERANKER
from model_adapters.models.family_table import SENTENCE_TRANSFORMER as SENTENCE_TRANSFORMER
from model_adapters.models.family_table import VLM as VLM
from model_adapters.models.family_table import Family, check_options, family_of
from triad_dataset.contract.errors import TriadError

KINDS: Final = ("embedder", "reranker")
# What kind of system a model is, in the words the leaderboard's family column and docs/models.md's systems table use.
SYSTEM_TYPES: Final = (
    "dual-tower",
    "VLM embedder",
    "reasoning embedder",
    "text-only",
    "API embedder",
    "reranker",
    "agentic",
    "captioner",
)

# What results.json "model" "input_pipeline" says about how the inputs were built.
VERIFIED: Final = "verified"  # a recipe proven equal to its authors' code (its Reference)
UNVERIFIED: Final = "unverified"  # `--recipe generic`: a pipeline that mirrors nobody's code
OWN: Final = "own"  # the user's own encoder (`--encoder`): its inputs are its own business
UNVERIFIED_LABEL: Final = "unverified input pipeline"
GENERIC: Final = "generic"

# config.json keys that mark a multimodal checkpoint: a text-only family must not take it (it would drop images).
MULTIMODAL_CONFIG_KEYS: Final = ("vision_config", "audio_config", "thinker_config", "visual")


@dataclass(frozen=True)
class Reference:
    """The authors' code a recipe was proven equal to: `code` (repository + file(s)), `commit`, and the test that
    compares our adapter with a fixture that code produced (tests/fixtures/<family>/NOTE.md says how)."""

    code: str
    commit: str
    test: str

    def label(self) -> str:
        return f"{self.code} @ {self.commit}"


@dataclass(frozen=True)
class Match:
    """What a checkpoint's own files must show for detection to choose a recipe without `--recipe`.

    `hub_ids`: exact Hub ids, or `fnmatch` patterns of them (or Hugging Face cache snapshots of them) — enough on
    their own. The other fields form the signature; a recipe with no signature field set is chosen by Hub id only.
    Every signature field that is set must hold: `model_types` (config.json model_type is one of them),
    `architectures` (one of them is listed in config.json architectures), `remote_code` (True: config.json has an
    auto_map; False: it has none), `remote_classes` (a config.json auto_map value names one of these classes,
    "module.Class" or "Class"), `tokens` (all are tokens of the tokenizer), `tokenizer_classes`
    (tokenizer_config.json tokenizer_class is one of them), `files` (all exist), `text_only` (config.json has none
    of MULTIMODAL_CONFIG_KEYS), `query_prompt` (config_sentence_transformers.json prompts["query"] is exactly this).
    """

    hub_ids: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    remote_code: bool | None = None
    remote_classes: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()
    tokenizer_classes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    text_only: bool | None = None
    query_prompt: str | None = None

    @property
    def has_signature(self) -> bool:
        return bool(
            self.model_types
            or self.architectures
            or self.remote_classes
            or self.tokens
            or self.tokenizer_classes
            or self.files
        )

    def names_hub_id(self, hub_id: str) -> bool:
        """Whether `hub_id` is one of `hub_ids` or matches one of their patterns.

        >>> Match(hub_ids=("google/siglip2-*",)).names_hub_id("google/siglip2-so400m-patch14-384")
        True
        """
        from fnmatch import fnmatchcase

        return any(fnmatchcase(hub_id, pattern) for pattern in self.hub_ids)


@dataclass(frozen=True)
class Recipe:
    """One way of feeding a checkpoint. `options` are the family's parameters (recorded in results.json and part of
    the embedding-cache key); `config_options` derive further options from config.json (option -> (dotted key,
    default)); `refused` is the one-line reason a recipe cannot be run faithfully (then nothing is loaded)."""

    name: str
    family: str
    kind: str = "embedder"
    options: Mapping[str, Any] = field(default_factory=dict)
    config_options: Mapping[str, tuple[str, Any]] = field(default_factory=dict)
    match: Match = field(default_factory=Match)
    reference: Reference | None = None
    refused: str | None = None
    has_instruction_field: bool = False
    text_only: bool = False  # the family never sees images (they are left out of inputs and cache keys)
    dtype: str | None = None  # default dtype when config.json gives none (else float32)
    description: str = ""
    # Bump when the adapter changes what it feeds this recipe's models without changing its options: the cache key
    # then changes for these models only (docs/runner.md "The embedding cache" lists each bump).
    feed_version: int = 0

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse option names that the recipe's family does not define (a TypeError naming the recipe)."""
        check_options(self.family, [*self.options, *self.config_options], f"recipe {self.name}")

    @property
    def family_row(self) -> Family:
        """The family that loads this recipe's models: its options dataclass and its loaders."""
        return family_of(self.family, f"recipe {self.name}")

    @property
    def input_pipeline(self) -> str:
        return VERIFIED if self.reference is not None else UNVERIFIED

    def refuse_if_refused(self, where: str) -> None:
        if self.refused:
            raise TriadError(f"{where}: recipe {self.name} cannot be run as its authors run it: {self.refused}")


QWEN3_VL_EMBEDDING_REF: Final = Reference(
    "QwenLM/Qwen3-VL-Embedding src/models/qwen3_vl_embedding.py (+ qwen-vl-utils 0.0.14 fetch_image)",
    "8ce3aab1fbcc",
    "tests/models/test_qwen3_vl_reference.py",
)
QWEN3_VL_RERANKER_REF: Final = Reference(
    "QwenLM/Qwen3-VL-Embedding src/models/qwen3_vl_reranker.py",
    "8ce3aab1fbcc",
    "tests/models/test_qwen3_vl_reference.py",
)
DUAL_TOWER_REF: Final = Reference(
    "transformers 5.25.0 get_text_features / get_image_features (documented usage) + paper B.2.1 fusion",
    "v5.25.0",
    "tests/models/test_dual_tower_reference.py",
)
SIGLIP_REF: Final = Reference(
    "google-research/big_vision configs/proj/image_text/SigLIP_demo.ipynb (tokenize max_len 64, sticky EOS, padded "
    "with EOS, no lower-casing), models/proj/image_text/text_transformer.py (no attention mask, last position) + "
    "transformers 5.25.0 SiglipModel get_text_features / get_image_features + paper B.2.1 fusion",
    "0127fb6b337e",
    "tests/models/test_dual_tower_reference.py",
)
SIGLIP2_REF: Final = Reference(
    "google-research/big_vision configs/proj/image_text/SigLIP2_demo.ipynb (text preprocessing: lower, tok gemma, "
    "no BOS, sticky EOS, 64), models/proj/image_text/text_transformer.py (no attention mask, last position) + "
    "transformers 5.25.0 SiglipModel / Siglip2Model get_text_features / get_image_features + paper B.2.1 fusion",
    "0127fb6b337e",
    "tests/models/test_dual_tower_reference.py",
)
SIGLIP_TOKENIZERS: Final = ("SiglipTokenizer", "SiglipTokenizerFast")  # SigLIP 1: T5's sentencepiece, 32k
SIGLIP2_TOKENIZERS: Final = ("GemmaTokenizer", "GemmaTokenizerFast", "Siglip2Tokenizer")  # SigLIP 2: Gemma's, 256k
VLM2VEC_REF: Final = Reference(
    "TIGER-AI-Lab/VLM2Vec src/model/processor.py (process_input_text, Qwen2_VL_process_fn), src/model/model.py "
    "(MMEBModel._pooling)",
    "6e1e1d42d4cb",
    "tests/models/test_vlm2vec_reference.py",
)
VLM2VEC_V1_REF: Final = Reference(
    "TIGER-AI-Lab/VLM2Vec experiments/public/eval/eval_vlm2vecv1_8gpu.sh (--image_resolution high "
    "--resize_use_processor false), src/data/collator/eval_collator.py (MultimodalEvalDataCollator), "
    "src/model/processor.py, src/model/model.py",
    "6e1e1d42d4cb",
    "tests/models/test_vlm2vec_reference.py",
)
QWEN_CHAT_TEST: Final = "tests/models/test_qwen_chat_reference.py"
EMBED_RL_REF: Final = Reference(
    "ZoengHN/Embed-RL eval/mmeb_eval/vlm2vec/src/model/processor.py (Qwen3_VL_process_fn), "
    "src/model/model.py (MMEBModel.encode_input) + eval/toy_eval/image_eval.py",
    "87b52f735d75",
    QWEN_CHAT_TEST,
)
UME_R1_REF: Final = Reference(
    "XMUDeepLIT/UME-R1 README.md (discriminative example) + src/eval/VLM2Vec/eval_twomode.py "
    "(get_disc_embedding_idx, left padding)",
    "55e551260dd7",
    QWEN_CHAT_TEST,
)
RZENEMBED_REF: Final = Reference(
    "360CVGroup/RzenEmbed rzen_embed_inference.py (RzenEmbed.get_fused_embeddings)", "b07eb547ec88", QWEN_CHAT_TEST
)
OPS_MM_REF: Final = Reference(
    "OpenSearch-AI/Ops-MM-embedding-v1 Hub remote file ops_mm_embedding_v1.py (OpsMMEmbeddingV1.embed), read as "
    "vendored verbatim by ssu-humane/VILLAIN src/models/ops_mm_embedding_v1.py",
    "40f1d38a2535",
    QWEN_CHAT_TEST,
)
LAMRA_REF: Final = Reference(
    "Code-kunkun/LamRA eval/eval_mbeir.py, dataset/datasets_mbeir.py, collators/mbeir_eval.py, "
    "models/qwen2_vl.py (Qwen2VLRetForConditionalGeneration)",
    "72863991e62f",
    QWEN_CHAT_TEST,
)
SENTENCE_TRANSFORMERS_REF: Final = Reference(
    "sentence-transformers SentenceTransformer.encode (the model's own modules.json)",
    "5.x",
    "tests/models/test_adapters.py",
)

ARK_EMBEDDINGS_REF: Final = Reference(
    "volcengine/volcengine-python-sdk volcenginesdkarkruntime/resources/multimodal_embeddings.py + "
    "types/multimodal_embedding/ (the request and response the provider's SDK builds and parses)",
    "b5be43b5e6b3",
    "tests/models/test_api_models.py",
)
QWEN3_EMBEDDING_REF: Final = Reference(
    "QwenLM/Qwen3-Embedding evaluation/qwen3_embedding_model.py (TransformersTextEmbedder, evaluation/run_mteb.sh "
    "settings) + README usage",
    "f4ad0c434c0e",
    "tests/models/test_text_reference.py",
)
DIVER_REF: Final = Reference(
    "AQ-MedAI/Diver README.md (Transformers Usage)", "95b111b0adad", "tests/models/test_text_reference.py"
)
# Qwen3-Embedding's instruction field (TRIAD/ARK B.3: the benchmark instruction goes in the model's instruction
# field): README get_detailed_instruct / run_mteb.sh instruction_template "Instruct: {}\nQuery:".
QWEN3_EMBEDDING_OPTIONS: Final = {
    "query_template": "Instruct: {instruction}\nQuery:{text}",
    "max_seq_length": 8192,
    "padding_side": "left",
    "pooling": "lasttoken",
}

METACLIP_2_REF: Final = Reference(
    "facebookresearch/MetaCLIP README.md (Huggingface usage: AutoModel / AutoProcessor) + transformers 5.24.0 "
    "MetaClip2Model get_text_features / get_image_features + paper B.2.1 fusion",
    "f47f7841f6a9",
    "tests/models/test_dual_tower_reference.py",
)
BGE_VL_REF: Final = Reference(
    "FlagOpen/FlagEmbedding research/BGE_VL/modeling_MMRet_CLIP.py (CLIPModel.encode: the remote code of "
    "BAAI/BGE-VL-base/-large)",
    "7ed43d67ec03",
    "tests/models/test_dual_tower_reference.py",
)
BGE_M3_REF: Final = Reference(
    "FlagOpen/FlagEmbedding FlagEmbedding/inference/embedder/encoder_only/m3.py "
    "(BGEM3FlagModel.encode dense_vecs; model card max_length 8192)",
    "7ed43d67ec03",
    "tests/models/test_text_reference.py",
)

BGE_RERANKER_REF: Final = Reference(
    "FlagOpen/FlagEmbedding FlagEmbedding/inference/reranker/encoder_only/base.py "
    "(FlagReranker.compute_score, normalize=True)",
    "7ed43d67ec03",
    "tests/models/test_text_reference.py",
)
# Options of the Qwen-VL chat embedder (model_adapters/families/qwen_chat.py `ChatOptions`), each read from the
# authors' code named in its Reference; docs/models.md "Input pipelines" lists them.
EMBED_RL_OPTIONS: Final = ChatOptions.table(
    backbone="qwen3_vl",
    render="template",
    template_source="tokenizer",
    instruction="prefix",  # paper B.3: no instruction field -> plain-text prefix
    text_rule="strip_vision_tokens",
    suffix="Summarize the above content in one word:",
    empty="bare",
    assistant="<emb>",
    add_generation_prompt=False,
    add_tokens=["<emb>"],
    pooling="last_token",
    pool_token="<emb>",
    padding_side="left",
    positions="rope",
    image_factor=32,
    min_pixels=128 * 32 * 32,
    max_pixels=768 * 32 * 32,
    rgba="white",
    processor_resize=True,
    max_length=8192,
    truncation="text_only",
)

UME_R1_DISC_OPTIONS: Final = ChatOptions.table(
    backbone="qwen2_vl",
    render="template",
    template_source="processor",
    instruction="prefix",  # paper B.3: the query-side instruction in the text (UME-R1 has no instruction field)
    suffix="\n<disc_emb>\n",
    add_generation_prompt=True,
    pooling="last_token",
    pool_token="<disc_emb>",
    pool_tail=2,
    padding_side="left",
    positions="rope",
    image_factor=28,
    min_pixels=4 * 28 * 28,
    max_pixels=16384 * 28 * 28,
    rgba="white",
    processor_resize=True,
    placeholder_image=[28, 28],  # paper B.2.1: a 28x28 white placeholder on pure-text inputs
    truncation="none",
)

RZENEMBED_OPTIONS: Final = ChatOptions.table(
    backbone="qwen2_vl",
    render="chatml",
    system="You are a helpful assistant.",
    instruction="concat",  # get_fused_embeddings: instruction + text (paper B.3: its instruction field)
    assistant="<|endoftext|>",
    pooling="last_attended",
    padding_side="right",
    positions="sequential",
    image_factor=28,
    min_pixels=4 * 28 * 28,
    max_pixels=16384 * 28 * 28,
    rgba="convert",
    processor_resize=True,
    processor_min_pixels=256 * 28 * 28,
    processor_max_pixels=1280 * 28 * 28,
    max_length=2000,
    truncation="all",
)

LAMRA_OPTIONS: Final = ChatOptions.table(
    backbone="qwen2_vl",
    render="template",
    template_source="processor",
    instruction="prefix",
    text_rule="mbeir_format",  # M-BEIR: format_string(f"{prompt} {text}")
    suffix={
        "image_text": "\nSummarize above image and sentence in one word: ",
        "text": "\nSummarize above sentence in one word: ",
        "image": "\nSummarize above image in one word: ",
    },
    assistant="<emb>.",
    add_generation_prompt=True,
    add_tokens=["<emb>"],
    pooling="first_token_minus_one",
    pool_token="<emb>",
    padding_side="tokenizer",
    positions="sequential",
    image_factor=28,
    min_pixels=4 * 28 * 28,
    max_pixels=300 * 28 * 28,
    rgba="convert",
    processor_resize=True,
    max_length=1024,
    truncation="candidates",
)

OPS_MM_OPTIONS: Final = ChatOptions.table(
    backbone="qwen2_vl",
    render="chatml",
    system="You are a helpful assistant.",
    instruction="system",  # embed(..., instruction=...): the instruction replaces the system text
    assistant="<|endoftext|>",
    pooling="last_attended",
    padding_side="left",
    positions="rope",
    image_factor=28,
    min_pixels=256 * 28 * 28,
    max_pixels=1280 * 28 * 28,
    rgba="convert",
    processor_resize=True,
    processor_min_pixels=256 * 28 * 28,
    processor_max_pixels=1280 * 28 * 28,
    max_length=None,
    truncation="all",
)


REASONIR_REF: Final = Reference(
    "facebookresearch/ReasonIR training/modeling_llama.py (ReasonIRModel: is_causal=False, encode, pooling) + "
    "README.md Transformers usage + evaluation/bright/retrievers.py retrieval_reasonir and configs/reasonir/*.json "
    "(instructions, max_length)",
    "0aac96269e45",
    "tests/models/test_text_reference.py",
)
# ReasonIR's instruction field is `encode(..., instruction=...)`; its BRIGHT configs wrap the task instruction as
# "<|user|>\n{task}\n<|embed|>\n" and give documents "<|embed|>\n" (TRIAD/ARK B.3: the benchmark instruction goes
# in the instruction field); a query without one gets the documents' "<|embed|>\n" (GritLM's empty instruction).
REASONIR_OPTIONS: Final = {
    "query_instruction_template": "<|user|>\n{instruction}\n<|embed|>\n",
    "query_instruction_default": "<|embed|>\n",
    "document_instruction": "<|embed|>\n",
    "max_length": 32768,
}  # retrieval_reasonir's query/doc max_length default
# --- reasoning embedders (model_adapters/families/reasoning.py; TRIAD §5.4, B.2.1) ------------------------------
UME_R1_GEN_REF: Final = Reference(
    "XMUDeepLIT/UME-R1 README.md (generative example: prompt, generate) + src/eval/VLM2Vec/eval_twomode.py "
    "(encode_embeddings mode gen, get_gen_embedding_idx)",
    "55e551260dd7",
    "tests/models/test_ume_r1_gen_reference.py",
)
EMBED_RL_TCOT_REF: Final = Reference(
    "ZoengHN/Embed-RL data_pipe/eval_cot_generate/image_cot_generate.py (the T-CoT requests), "
    "train/reinforcement_learning/verl/verl/utils/dataset/vlm2vec_dataset.py (the four prompts), "
    "eval/mmeb_eval/vlm2vec/src/model/processor.py (Qwen3_VL_process_fn, process_cot_with_visual_content)",
    "87b52f735d75",
    "tests/models/test_embed_rl_tcot_reference.py",
)
# The README's generative prompt, verbatim (trailing spaces included), after the Disc suffix "\n<disc_emb>\n".
UME_R1_GEN_PROMPT: Final = (
    "Represent the above input text, images, videos, or any combination of the three as embeddings. \n"
    "First output the thinking process in <think> </think> tags and then summarize the entire input in a word or "
    "sentence. \nFinally, use the <gen_emb> tag to represent the entire input."
)
UME_R1_GEN_OPTIONS: Final = reasoning_options(
    UME_R1_DISC_OPTIONS,  # the Disc input (and, for candidates, the Disc embedding)
    reasoning="ume-r1-gen",
    gen_prompt=UME_R1_GEN_PROMPT,
    # over the checkpoint's generation_config.json (TRIAD B.2.1 keeps its sampling settings): the README's and the
    # eval command's --max_new_tokens 8192
    decoding={"max_new_tokens": 8192},
    seed=0,
)
EMBED_RL_TCOT_OPTIONS: Final = reasoning_options(
    EMBED_RL_OPTIONS,  # the Embed-RL embedder, with the T-CoT before its summarize line
    reasoning="embed-rl-tcot",
    # TRIAD B.2.1: Qwen3-VL-8B-Instruct (the reasoner's training backbone) for the unreleased reasoner
    generator="Qwen/Qwen3-VL-8B-Instruct",
    generator_revision="main",
    generator_dtype="bfloat16",
    # image_cot_generate.py's request: temperature 1.0, max_tokens 4096 (over the reasoner's generation_config.json)
    decoding={"do_sample": True, "temperature": 1.0, "max_new_tokens": 4096},
    seed=0,
)
TWN_REFUSED: Final = (
    "Think When Needed (TRIAD B.2.1; arXiv 2605.14448: reasoning + embedding LoRA adapters and a routing gate on "
    "Qwen3-VL-4B-Instruct) has no public code or weights, so its adapters, gate and wrapper cannot be fed as their "
    "authors do"
)

# Qwen3-Embedding's config_sentence_transformers.json query prompt (Hub Qwen/Qwen3-Embedding-4B; Diver-Retriever-4B,
# its fine-tune, ships the same files): a local copy shows it, the Qwen3 backbone and modules.json.
QWEN3_EMBEDDING_QUERY_PROMPT: Final = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)
QWEN3_EMBEDDING_SIGNATURE: Final[dict[str, Any]] = {
    "model_types": ("qwen3",),
    "architectures": ("Qwen3Model", "Qwen3ForCausalLM"),
    "files": ("modules.json",),
    "text_only": True,
    "remote_code": False,
    "query_prompt": QWEN3_EMBEDDING_QUERY_PROMPT,
}
# A sentence-transformers query prompt with this marker is an instruction template: the generic recipe would put the
# benchmark instruction after the checkpoint's default task, so it refuses such a checkpoint.
INSTRUCTION_TEMPLATE_MARKER: Final = "Instruct:"

# BGE-VL's Hub config.json auto_map (FlagEmbedding research/BGE_VL: AutoModel -> modeling_MMRet_CLIP.CLIPModel)
BGE_VL_REMOTE_CLASS: Final = "modeling_MMRet_CLIP.CLIPModel"
EVA_CLIP_REFUSED: Final = (
    "its authors' code (baaivision/EVA @ 5623d08bb08a EVA-CLIP/rei/eva_clip) builds the image preprocessing from "
    "torchvision (transform.py lines 5-7) and the EVA vision tower from timm (eva_vit_model.py lines 10-13), and "
    "torchvision cannot be installed beside transformers here; ARK §4.1 does not say which EVA-CLIP (EVA01 or "
    "EVA02, B/L/E, 8B, 18B) it ran; the Hub checkpoints' EvaCLIPModel is remote code that transformers' CLIPModel "
    "does not run"
)
TEXT_LIMIT: Final = {"max_length": ("text_config.max_position_embeddings", None)}

RECIPES: Final[tuple[Recipe, ...]] = (
    # --- text embedders (sentence-transformers) ----------------------------------------------------------------
    Recipe(
        "sentence-transformers",
        SENTENCE_TRANSFORMER,
        match=Match(files=("modules.json",), text_only=True, remote_code=False),
        reference=SENTENCE_TRANSFORMERS_REF,
        text_only=True,
        description="a text-only sentence-transformers model, encoded by its own modules and prompts (queries "
        "encode_query, documents encode_document; images left out)",
    ),
    # --- dual towers (paper B.2.1: unnormalized projections summed 1:1, then L2) --------------------------------
    Recipe(
        "clip",
        DUAL_TOWER,
        options={},
        config_options={"max_length": ("text_config.max_position_embeddings", 77)},
        match=Match(model_types=("clip",), remote_code=False),
        reference=DUAL_TOWER_REF,
        description="CLIP through transformers' CLIPModel",
    ),
    Recipe(
        "siglip",
        DUAL_TOWER,
        options={"padding": "max_length", "padding_side": "right"},
        config_options={"max_length": ("text_config.max_position_embeddings", 64)},
        match=Match(model_types=("siglip",), tokenizer_classes=SIGLIP_TOKENIZERS, remote_code=False),
        reference=SIGLIP_REF,
        description="SigLIP (its T5 tokenizer; max-length padded text at the end, no attention mask, as trained)",
    ),
    Recipe(
        "siglip2",
        DUAL_TOWER,
        options={"padding": "max_length", "padding_side": "right", "lowercase": True},
        config_options={"max_length": ("text_config.max_position_embeddings", 64)},
        # FixRes checkpoints say model_type siglip (the SigLIP 1 classes), NaFlex ones siglip2: Gemma's tokenizer
        # tells SigLIP 2 from SigLIP 1 (big_vision README_siglip2.md: "the vocab size (256k) and the tokenizer")
        match=Match(
            hub_ids=("google/siglip2-*",),
            model_types=("siglip", "siglip2"),
            tokenizer_classes=SIGLIP2_TOKENIZERS,
            remote_code=False,
        ),
        reference=SIGLIP2_REF,
        description="SigLIP 2, FixRes or NaFlex (A-Z lower-cased, padded at the end to 64, no attention mask, as "
        "big_vision feeds it)",
    ),
    Recipe(
        "metaclip-2",
        DUAL_TOWER,
        config_options={"max_length": ("text_config.max_position_embeddings", 77)},
        match=Match(model_types=("metaclip_2",), remote_code=False),
        reference=METACLIP_2_REF,
        description="MetaCLIP 2 (worldwide) through transformers' MetaClip2Model (XLM-V tokenizer, first EOS)",
    ),
    Recipe(
        "bge-vl-clip",
        DUAL_TOWER,
        config_options={"max_length": ("text_config.max_position_embeddings", 77)},
        match=Match(hub_ids=("BAAI/BGE-VL-base", "BAAI/BGE-VL-large")),
        reference=BGE_VL_REF,
        description="BGE-VL-CLIP (MegaPairs): a CLIPModel whose remote encode() sums the unnormalized text and "
        "image projections, then L2 - run by transformers' CLIPModel, no remote code",
    ),
    Recipe(
        "jina-clip-v2",
        DUAL_TOWER,
        options={"trust_remote_code": True, "max_length": 512},
        match=Match(hub_ids=("jinaai/jina-clip-v2",)),
        refused="its modeling code is Hub remote code (jinaai/jina-clip-v2: an XLM-R text tower and an EVA02 vision "
        "tower needing timm, torchvision and einops) that no fixture has been made from, so no input pipeline is "
        "proven for it",
        description="jina-clip-v2 (remote code)",
    ),
    Recipe(
        "bge-vl-clip-folder",
        DUAL_TOWER,
        match=Match(model_types=("clip",), remote_classes=(BGE_VL_REMOTE_CLASS,)),
        refused="a folder whose config.json auto_map loads BGE-VL's remote CLIPModel (modeling_MMRet_CLIP.py) is "
        "run only as the checkpoint it copies, since its remote code file is not the one the fixture proves: "
        "--model bge-vl-base (or bge-vl-large) --model-path DIR, or --recipe bge-vl-clip",
        description="a local copy of BGE-VL-CLIP (its remote code named by auto_map)",
    ),
    Recipe(
        "eva-clip",
        DUAL_TOWER,
        match=Match(model_types=("clip",), remote_classes=("EvaCLIPModel",)),
        refused=EVA_CLIP_REFUSED,
        description="EVA-CLIP (remote code EvaCLIPModel behind model_type clip)",
    ),
    # --- text embedders with their own query prompts (ARK §4.1 caption-then-embed) -------------------------
    Recipe(
        "qwen3-embedding",
        SENTENCE_TRANSFORMER,
        options=QWEN3_EMBEDDING_OPTIONS,
        has_instruction_field=True,
        text_only=True,
        dtype="float16",
        match=Match(hub_ids=("Qwen/Qwen3-Embedding-4B", "Qwen/Qwen3-Embedding-8B"), **QWEN3_EMBEDDING_SIGNATURE),
        reference=QWEN3_EMBEDDING_REF,
        description="Qwen3-Embedding: queries 'Instruct: {instruction}\\nQuery:{text}' (no instruction: the "
        "model's own query prompt), documents bare, left padding, last token, L2, 8192 tokens",
    ),
    Recipe(
        "diver-retriever",
        SENTENCE_TRANSFORMER,
        options=QWEN3_EMBEDDING_OPTIONS,
        has_instruction_field=True,
        text_only=True,
        dtype="bfloat16",
        match=Match(hub_ids=("AQ-MedAI/Diver-Retriever-4B",), **QWEN3_EMBEDDING_SIGNATURE),
        reference=DIVER_REF,
        description="Diver-Retriever (Qwen3-Embedding-4B fine-tune), fed as its README: Qwen3-Embedding's recipe",
    ),
    Recipe(
        "bge-m3",
        SENTENCE_TRANSFORMER,
        options={"max_seq_length": 8192, "pooling": "cls", "use_prompts": False},
        text_only=True,
        reference=BGE_M3_REF,
        match=Match(
            hub_ids=("BAAI/bge-m3",),
            model_types=("xlm-roberta",),
            architectures=("XLMRobertaModel",),
            files=("modules.json", "colbert_linear.pt", "sparse_linear.pt"),
            text_only=True,
        ),
        description="BGE-M3 dense: CLS token, L2, 8192 tokens, no prompts (BGEM3FlagModel); instruction prepended",
    ),
    Recipe(
        "reasonir",
        BIDIRECTIONAL_LLAMA,
        options=REASONIR_OPTIONS,
        has_instruction_field=True,
        text_only=True,
        dtype="bfloat16",
        match=Match(
            hub_ids=("reasonir/ReasonIR-8B",), model_types=("llama",), architectures=("ReasonIRModel",), text_only=True
        ),
        reference=REASONIR_REF,
        description="ReasonIR-8B: transformers' LlamaModel with is_causal=False (ReasonIRModel's bidirectional "
        "attention, no remote code run); queries '<|user|>\\n{instruction}\\n<|embed|>\\n' + text, "
        "documents and instruction-less queries '<|embed|>\\n' + text; mean over the tokens after the "
        "instruction, L2; right padding; 32768 tokens",
    ),
    # --- omni thinker embedders -----------------------------------------------------------------------------
    Recipe(
        "qwen2.5-omni-embedder",
        VLM,
        match=Match(hub_ids=("nvidia/omni-embed-nemotron-3b",), model_types=("qwen2_5_omni", "qwen2_5_omni_thinker")),
        refused="E5-Omni-7B and omni-embed-nemotron-3b (Qwen2.5-Omni thinker embedders) publish their input "
        "templates and pooling only in Hub files that no fixture has been made from, so neither recipe, nor E5-Omni's "
        "query/document interface rule (TRIAD B.2.1), is proven",
        description="Qwen2.5-Omni thinker embedders (E5-Omni, omni-embed-nemotron)",
    ),
    # --- VLM embedders ----------------------------------------------------------------------------------------
    Recipe(
        "qwen3-vl-embedding",
        VLM,
        options={"pipeline": "qwen3_vl"},
        has_instruction_field=True,
        dtype="bfloat16",
        match=Match(hub_ids=("Qwen/Qwen3-VL-Embedding-2B", "Qwen/Qwen3-VL-Embedding-8B")),
        reference=QWEN3_VL_EMBEDDING_REF,
        description="Qwen3-VL-Embedding: instruction in the system turn, last attended token",
    ),
    Recipe(
        "vlm2vec-v2",
        VLM,
        options={"pipeline": "vlm2vec", "requires": ["peft"]},
        dtype="bfloat16",
        match=Match(hub_ids=("VLM2Vec/VLM2Vec-V2.0",)),
        reference=VLM2VEC_REF,
        description="VLM2Vec-V2.0: no chat template, '<|image_pad|> {instruction} {text}', last attended token",
        feed_version=1,  # 1: the authors' sequential positions (VLM2Vec src/model/model.py calls no rope index)
    ),
    Recipe(
        "vlm2vec-v1",
        VLM,
        options={"pipeline": "vlm2vec", "requires": ["peft"], "image_resolution": [1344, 1344]},
        dtype="bfloat16",
        match=Match(hub_ids=("TIGER-Lab/VLM2Vec-Qwen2VL-2B", "TIGER-Lab/VLM2Vec-Qwen2VL-7B")),
        reference=VLM2VEC_V1_REF,
        description="VLM2Vec-V1 (Qwen2-VL): the V2 path, every image first resized to 1344x1344 "
        "(image_resolution 'high', as the authors evaluate V1 checkpoints)",
        feed_version=1,  # 1: the authors' sequential positions, as vlm2vec-v2
    ),
    # --- Qwen-VL chat embedders (model_adapters/families/qwen_chat.py) ---------------------------------------------
    Recipe(
        "embed-rl",
        QWEN_CHAT,
        options=EMBED_RL_OPTIONS,
        dtype="bfloat16",
        reference=EMBED_RL_REF,
        match=Match(hub_ids=("ZoengHouNaam/Embed-RL-2B", "ZoengHouNaam/Embed-RL-4B")),
        description="Embed-RL without CoT: [image][text]['Summarize the above content in one word:'], assistant "
        "'<emb>', pooled at the last <emb>",
    ),
    Recipe(
        "ume-r1-disc",
        QWEN_CHAT,
        options=UME_R1_DISC_OPTIONS,
        dtype="bfloat16",
        reference=UME_R1_REF,
        match=Match(
            hub_ids=("zhibinlan/UME-R1-2B", "zhibinlan/UME-R1-7B"),
            model_types=("qwen2_vl",),
            architectures=("Qwen2VLForConditionalGeneration",),
            remote_code=False,
            tokens=("<disc_emb>", "<gen_emb>"),
        ),
        description="UME-R1 discriminative mode: [image][text + '\\n<disc_emb>\\n'], generation prompt, pooled at "
        "the last <disc_emb>; a 28x28 white placeholder image on pure-text inputs (TRIAD B.2.1)",
    ),
    Recipe(
        "rzenembed",
        QWEN_CHAT,
        options=RZENEMBED_OPTIONS,
        dtype="bfloat16",
        has_instruction_field=True,
        reference=RZENEMBED_REF,
        match=Match(hub_ids=("qihoo360/RzenEmbed",)),
        description="RzenEmbed: hand-written ChatML, instruction + text, '<|endoftext|>' after the assistant "
        "prompt, last attended token, sequential positions",
    ),
    Recipe(
        "lamra-ret",
        QWEN_CHAT,
        options=LAMRA_OPTIONS,
        dtype="bfloat16",
        reference=LAMRA_REF,
        match=Match(hub_ids=("code-kunkun/LamRA-Ret",)),
        description="LamRA-Ret: M-BEIR text format, 'Summarize above ... in one word: ', assistant '<emb>.', "
        "pooled one position before the first <emb>, sequential positions",
    ),
    Recipe(
        "ops-mm-embedding-v1",
        QWEN_CHAT,
        options=OPS_MM_OPTIONS,
        dtype="bfloat16",
        has_instruction_field=True,
        reference=OPS_MM_REF,
        match=Match(hub_ids=("OpenSearch-AI/Ops-MM-embedding-v1-7B", "OpenSearch-AI/Ops-MM-embedding-v1-2B")),
        description="Ops-MM-embedding-v1: hand-written ChatML, instruction as the system text, '<|endoftext|>' "
        "after the assistant prompt, left padding, last token",
    ),
    Recipe(
        "wemm-embedding",
        QWEN_CHAT,
        match=Match(hub_ids=("tencent/WeMM-Embedding-9B",)),
        refused="its embedding code is Hub remote code (tencent/WeMM-Embedding-9B, custom_code, "
        "AutoModelForMultimodalLM) that no fixture has been made from, so no input pipeline is proven for it",
        description="WeMM-Embedding-9B (Qwen3.5 backbone + remote code)",
    ),
    Recipe(
        "b-tokens",
        QWEN_CHAT,
        match=Match(hub_ids=("siyrus/Btoks-Qwen3VL-2B-Instruct",)),
        refused="no inference code is published: the Hub card names a VLM2Emb class whose code, and any B-Tokens "
        "(Btoks) encoding code, is not public",
        description="B-Tokens-2B (Qwen3-VL-2B + bottleneck tokens)",
    ),
    Recipe(
        GENERIC,
        VLM,
        options={"pipeline": "generic"},
        has_instruction_field=True,
        description="a generic ChatML pipeline (system = instruction, left padding, last position) that mirrors "
        "no authors' code: only with --recipe generic, and every output says 'unverified input "
        "pipeline'",
    ),
    # --- API-only embedders (never detected: registry entries only) -------------------------------------------
    Recipe(
        "ark-multimodal-embedding",
        API,
        options={"provider": "volcengine-ark", "encoding_format": "float", "instruction": "prepend"},
        reference=ARK_EMBEDDINGS_REF,
        description="Volcengine Ark multimodal embeddings API (POST /embeddings/multimodal): one request per input, "
        "text then image as a base64 data URL, the instruction prepended; responses cached by model "
        "version + payload hash; results marked not reproducible",
    ),
    # --- reasoning embedders: generate, then embed (never detected: registry entries or --recipe) ------------
    Recipe(
        "ume-r1-gen",
        REASONING,
        options=UME_R1_GEN_OPTIONS,
        dtype="bfloat16",
        reference=UME_R1_GEN_REF,
        description="UME-R1 Gen: queries generate with the README's prompt and the checkpoint's sampling settings, "
        "embedded at the generation step after the last <gen_emb> (else the last step); candidates "
        "in Disc mode (ume-r1-disc)",
    ),
    Recipe(
        "embed-rl-tcot",
        REASONING,
        options=EMBED_RL_TCOT_OPTIONS,
        dtype="bfloat16",
        reference=EMBED_RL_TCOT_REF,
        description="Embed-RL + T-CoT: a T-CoT from Qwen3-VL-8B-Instruct with Embed-RL's four prompts on both "
        "sides, its bbox_2d boxes cropped as extra images, embedded by the embed-rl recipe with the "
        "T-CoT before the summarize line",
    ),
    Recipe(
        "twn",
        REASONING,
        refused=TWN_REFUSED,
        description="TWN (Think When Needed): adaptive reasoning embedder on Qwen3-VL-4B-Instruct",
    ),
    # --- rerankers --------------------------------------------------------------------------------------------
    Recipe(
        "qwen3-vl-reranker",
        RERANKER,
        kind="reranker",
        options={"pipeline": "qwen3_vl"},
        has_instruction_field=True,
        dtype="bfloat16",
        match=Match(hub_ids=("Qwen/Qwen3-VL-Reranker-2B", "Qwen/Qwen3-VL-Reranker-8B")),
        reference=QWEN3_VL_RERANKER_REF,
        description="Qwen3-VL-Reranker: judge prompt, sigmoid(yes - no) at the last position",
    ),
    Recipe(
        "bge-reranker-v2-m3",
        RERANKER,
        kind="reranker",
        options={"pipeline": "cross_encoder", "max_length": 512, "normalize": True},
        text_only=True,
        match=Match(hub_ids=("BAAI/bge-reranker-v2-m3",)),
        reference=BGE_RERANKER_REF,
        description="bge-reranker-v2-m3: (query, passage) cross-encoder logit, sigmoid; text only (captions)",
    ),
    Recipe(
        "jina-reranker-m0",
        RERANKER,
        kind="reranker",
        match=Match(hub_ids=("jinaai/jina-reranker-m0",)),
        refused="its scoring head is remote code (Hub jinaai/jina-reranker-m0 modeling.py, compute_score) that no "
        "fixture has been made from; the Qwen3-VL-Reranker yes/no head is a different model",
        description="jina-reranker-m0 (Qwen2-VL backbone + remote scoring head)",
    ),
)
RECIPES_BY_NAME: Final[dict[str, Recipe]] = {r.name: r for r in RECIPES}


def get_recipe(name: str, *, kind: str = "embedder") -> Recipe:
    """The recipe named `name` of that kind; an unknown name lists the valid ones.

    >>> get_recipe("clip").family
    'dual_tower'
    """
    recipe = RECIPES_BY_NAME.get(name)
    if recipe is None or recipe.kind != kind:
        raise TriadError(f"--recipe {name!r}: no {kind} recipe of that name; valid: {', '.join(recipe_names(kind))}")
    return recipe


def recipe_names(kind: str = "embedder") -> list[str]:
    """Names of the recipes of one kind, in table order."""
    return [r.name for r in RECIPES if r.kind == kind]


def config_value(config: Mapping[str, Any], dotted: str) -> Any:
    """config["a"]["b"] for "a.b" (None when any part is missing).

    >>> config_value({"text_config": {"max_position_embeddings": 77}}, "text_config.max_position_embeddings")
    77
    """
    value: Any = config
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def options_for(recipe: Recipe, config: Mapping[str, Any]) -> dict[str, Any]:
    """The recipe's options plus those it derives from the checkpoint's config.json."""
    options = dict(recipe.options)
    for option, (dotted, default) in recipe.config_options.items():
        value = config_value(config, dotted)
        value = default if value is None else value
        if value is not None:
            options[option] = int(value) if isinstance(value, (int, float)) else value
    return options
