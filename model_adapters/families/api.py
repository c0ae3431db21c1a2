"""API-only embedders: Seed1.6-embedding (`doubao-embedding-vision-251215`, Volcengine Ark), ARK's best
embedder (ARK §4.1, [47], accessed 2026-01-10).

The request, as the provider's SDK builds it (volcengine-python-sdk @ b5be43b5e6b3,
`volcenginesdkarkruntime/resources/multimodal_embeddings.py` and `types/multimodal_embedding/`):

    POST {base}/embeddings/multimodal   (base https://ark.cn-beijing.volces.com/api/v3, or $ARK_BASE_URL)
    {"model": "doubao-embedding-vision-251215", "encoding_format": "float", "dimensions": 2048,
     "input": [{"type": "text", "text": ...}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}]}
    -> {"id", "model", "created", "object": "list", "data": {"embedding": [...], "object": "embedding"}, "usage"}

One request per input (the API embeds the whole `input` list into one vector); text first, then the image, as in
the SDK's example; an input without text sends the image alone, one without an image the text alone. The image is
sent as a base64 data URL whose MIME type is read from its bytes (the API requires the declared format to match).
The benchmark instruction is prepended to the text (paper B.3's rule for models without an instruction field):
neither the SDK nor the API reference we could read documents an instruction field (third-party pages mention an
`instructions` field from version 251215 on, with no verifiable shape), so none is sent. `dimensions` 2048 (the
SDK: 1024 or 2048); ARK does not say which it used.

Responses are cached by the runner's response store (`EmbeddingCache` under `--api-cache`, identity: provider,
endpoint, model version, dimensions, encoding; key: sha256 of the exact request payload), so a response is paid for
once; with `offline=True` only that store is read and a miss raises `protocol.OfflineMiss` (the runner counts them
and stops with one line). A response must report the requested model version, carry a finite vector of exactly
`dimensions` values, and be at most `Transport.max_response_bytes`; anything else is one line naming the input.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np

from model_adapters.families.api_client import JsonClient, LazyClient, Provider, provider, raise_failures
from model_adapters.planning.inputs import join_instruction
from model_adapters.protocol import ModelInput, OfflineMiss
from triad_dataset.contract.errors import TriadError

RESPONSES_VERSION: Final = "1"  # bump when the payload or the parsing of a response changes
# The image formats the API accepts, by their leading bytes (the API reference's format table).
IMAGE_MAGIC: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


@dataclass(frozen=True)
class ApiOptions:
    """An API recipe's or entry's options (the names a table row may set)."""

    provider: str | None = None  # the provider (its endpoint and key variable)
    encoding_format: str | None = None  # "float" or "base64"
    instruction: str | None = None  # how the instruction is sent ("prepend")
    model: str | None = None  # the provider's model version
    dimensions: int | None = None  # the vector size requested and checked


def image_mime(data: bytes) -> str | None:
    """The MIME type of encoded image bytes, from their signature (None when not a format the API accepts).

    >>> image_mime(b"\\x89PNG\\r\\n\\x1a\\n...") , image_mime(b"RIFF....WEBPVP8 "), image_mime(b"text")
    ('image/png', 'image/webp', None)
    """
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in IMAGE_MAGIC if data.startswith(magic)), None)


def describe_input(item: ModelInput) -> str:
    """A short description of an input for messages (the start of its text, its image's sha256 prefix)."""
    parts = [repr(item.text[:40] + ("…" if len(item.text) > 40 else ""))] if item.text else []
    if item.image is not None:
        parts.append(f"image sha256 {hashlib.sha256(item.image).hexdigest()[:12]}")
    return "input " + ", ".join(parts or ["(empty)"])


def payload(options: Mapping[str, Any], item: ModelInput) -> dict[str, Any]:
    """The request body for one input (module docstring)."""
    text = join_instruction(item.instruction, item.text)  # paper B.3: no instruction field, so it is prepended
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if item.image is not None:
        mime = image_mime(item.image)
        if mime is None:
            raise TriadError(
                f"{describe_input(item)}: the image is in no format the API accepts (PNG, JPEG, GIF, WEBP, BMP, TIFF)"
            )
        data_url = f"data:{mime};base64,{base64.b64encode(item.image).decode('ascii')}"
        parts.append({"type": "image_url", "image_url": {"url": data_url}})
    if not parts:
        raise TriadError(f"{describe_input(item)}: neither text nor image; the API embeds nothing")
    body: dict[str, Any] = {"model": options["model"], "input": parts, "encoding_format": options["encoding_format"]}
    if options.get("dimensions"):
        body["dimensions"] = int(options["dimensions"])
    return body


def payload_key(body: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a request payload: the response cache key (within a model version)."""
    blob = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def response_identity(entry: Any) -> dict[str, Any]:
    """The response cache's identity: which endpoint and model version produced the stored vectors."""
    o = entry.options
    return {
        "provider": o["provider"],
        "endpoint": entry.hub_id,
        "model": o["model"],
        "dimensions": o.get("dimensions"),
        "encoding_format": o["encoding_format"],
        "format": RESPONSES_VERSION,
    }


def resolved(entry: Any) -> Any:
    """The entry with its endpoint resolved now (the provider's base URL, or the environment's override)."""
    options = dict(entry.options)
    for key in ("provider", "model", "encoding_format"):
        if not options.get(key):
            raise TriadError(
                f"model {entry.name}: an API entry needs options[{key!r}] (model_adapters/families/api.py)"
            )
    return replace(entry, hub_id=provider(options["provider"]).endpoint())


def _vector(response: Any, options: Mapping[str, Any], what: str) -> np.ndarray:
    """The embedding of one response, checked (one line for every way it can be wrong)."""
    data = response.get("data") if isinstance(response, dict) else None
    if isinstance(data, list) and len(data) == 1:  # OpenAI-style list of one
        data = data[0]
    raw = data.get("embedding") if isinstance(data, dict) else None
    if raw is None:
        raise ValueError("malformed response: no data.embedding")
    if options["encoding_format"] == "base64":
        try:
            vec = np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
        except (TypeError, ValueError) as exc:
            raise ValueError("malformed response: data.embedding is not base64 float32") from exc
    else:
        if not isinstance(raw, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
            raise ValueError("malformed response: data.embedding is not a list of numbers")
        vec = np.asarray(raw, dtype=np.float32)
    want = options.get("dimensions")
    if want and vec.shape[0] != int(want):
        raise ValueError(f"returned a {vec.shape[0]}-dimensional vector, expected {int(want)} (dimensions)")
    if not np.isfinite(vec).all() or not vec.any():
        raise ValueError("returned a vector with NaN/inf values or all zeros")
    reported = response.get("model")
    if reported != options["model"]:
        raise ValueError(
            f"the response reports model {reported!r}, not the requested {options['model']!r}: the "
            "vectors would be stored under a version that did not produce them"
        )
    return vec


class _MemoryResponses:
    """A response store kept in memory (when the caller gives none)."""

    dir = "memory"

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}

    def lookup(self, keys: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        found = {k: self._vectors[k] for k in keys if k in self._vectors}
        return found, [k for k in keys if k not in found]

    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        self._vectors.update(zip(keys, vectors, strict=True))


class ArkEmbedder:
    """An `Encoder` over the Volcengine Ark multimodal embeddings API (queries and candidates alike)."""

    def __init__(self, entry: Any, *, responses: Any = None, offline: bool = False) -> None:
        self.entry = entry
        self.options = dict(entry.options)
        self.provider: Provider = provider(self.options["provider"])
        self.dim = int(self.options["dimensions"])
        self.responses = responses if responses is not None else _MemoryResponses()
        self.offline = offline
        self._client = LazyClient(self.provider, entry.hub_id, f"model {entry.name}")
        self.requested = 0
        self.cached = 0
        self.reported: Counter[str] = Counter()

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._encode(batch)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._encode(batch)

    def _encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        bodies = [payload(self.options, item) for item in batch]
        keys = [payload_key(b) for b in bodies]
        found, missing = self.responses.lookup(keys)
        todo = list(dict.fromkeys(missing))  # one request per distinct payload
        if todo and self.offline:
            raise OfflineMiss(sum(k not in found for k in keys), str(self.responses.dir))
        self.cached += len(keys) - len(missing)
        if todo:
            found.update(self._request(todo, {k: (b, item) for k, b, item in zip(keys, bodies, batch, strict=True)}))
        return np.stack([found[k] for k in keys])

    def _request(self, todo: list[str], by_key: dict[str, tuple[dict[str, Any], ModelInput]]) -> dict[str, np.ndarray]:
        client = self._client.get(f"{len(todo)} input(s) are not in the response cache ({self.responses.dir})")
        whats = [describe_input(by_key[k][1]) for k in todo]
        results = client.post_all([by_key[k][0] for k in todo], whats, lambda r, what: self._parse(r, what, client))
        done = {k: v for k, v in zip(todo, results, strict=True) if not isinstance(v, TriadError)}
        if done:  # paid for: stored even when another input of the batch failed
            self.responses.put(list(done), np.stack(list(done.values())))
            self.requested += len(done)
            self.reported[self.options["model"]] += len(done)
        raise_failures(results, "input(s)")
        return done

    def _parse(self, response: Any, what: str, client: JsonClient) -> np.ndarray:
        try:
            return _vector(response, self.options, what)
        except ValueError as exc:
            raise client.fail(what, str(exc)) from exc

    def api_stats(self) -> dict[str, Any]:
        """What results.json "api" records about this process's calls."""
        calls = self._client.stats()
        return {
            "responses_requested": self.requested,
            "responses_cached": self.cached,
            "reported_models": dict(self.reported),
            **calls,
        }


def load(
    entry: Any,
    path: str,
    *,
    device: str = "cpu",
    dtype: str | None = None,
    responses: Any = None,
    offline: bool = False,
) -> ArkEmbedder:
    """The family loader (`registry.load_encoder`); `responses` / `offline` come from the runner."""
    return ArkEmbedder(entry, responses=responses, offline=offline)
