"""API rewriters: ARK's query rewriting with GPT-5.2 (ARK §4.3, [56]) through an OpenAI-compatible chat
completions endpoint — OpenAI itself, or any server speaking the same protocol (vLLM, a gateway) via
$OPENAI_BASE_URL.

    POST {base}/chat/completions   (base https://api.openai.com/v1, or $OPENAI_BASE_URL; key $OPENAI_API_KEY)
    {"model": "gpt-5.2", "messages": [{"role": "user", "content": <the rewrite prompt with the query filled in>}],
     ...every other setting of the entry, as given (e.g. --set temperature=0, --set reasoning_effort=low)}
    -> {"model": <the version that answered>, "choices": [{"message": {"content": ...}, "finish_reason": ...}]}

One request per query, `Transport.concurrency` at a time. The paper gives no decoding settings, so none is sent (the
API's defaults: sampled output); `max_new_tokens` is sent as `max_completion_tokens` only when set (`--set
max_new_tokens=N`; a reasoning model spends completion tokens on reasoning first). The prompt is ours
(`registry.REWRITE_PROMPT`): our copy of the paper gives Table 27's title but not its text.

Every response is cached (`RESPONSES` records under `--api-cache`, identity: provider, endpoint, requested model;
key: sha256 of the exact payload, which holds the prompt and every setting) with the model version the response
reports (OpenAI answers an alias such as "gpt-5.2" with a dated snapshot), so a re-run pays nothing and `--offline`
reads only the cache. A response without message content, or larger than the transport's bound, is one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from model_adapters.families.api import payload_key
from model_adapters.families.api_client import JsonClient, LazyClient, provider, raise_failures
from model_adapters.generation.records import RecordCache, RecordFormat
from model_adapters.protocol import OfflineMiss
from triad_dataset.contract.errors import TriadError

RESPONSES_VERSION: Final = "1"
NOT_SENT: Final = ("provider", "model")  # options that name the model; every other option is a payload field


def _valid(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("text"), str) and isinstance(value.get("model"), str)


RESPONSES: Final = RecordFormat("response_key", "responses", "API response cache", "API model", valid=_valid)


def response_identity(entry: Any) -> dict[str, Any]:
    """Which endpoint and requested model the stored responses came from (the payload hash holds the rest)."""
    return {
        "kind": "chat",
        "provider": entry.options["provider"],
        "endpoint": entry.hub_id,
        "model": entry.options["model"],
        "format": RESPONSES_VERSION,
    }


def resolved(entry: Any) -> Any:
    """The entry with its endpoint resolved now (the provider's base URL, or the environment's override)."""
    for key in ("provider", "model"):
        if not entry.options.get(key):
            raise TriadError(f"rewriter {entry.name}: an API entry needs options[{key!r}]")
    return replace(entry, hub_id=provider(entry.options["provider"]).endpoint())


def describe_query(query: str) -> str:
    return "query " + repr(query[:50] + ("…" if len(query) > 50 else ""))


class ChatRewriter:
    """A `Rewriter` over an OpenAI-compatible chat completions API."""

    def __init__(self, entry: Any, *, responses: RecordCache | None = None, offline: bool = False) -> None:
        self.entry = entry
        self.provider = provider(entry.options["provider"])
        self.responses = responses if responses is not None else RecordCache(None, response_identity(entry), RESPONSES)
        self.offline = offline
        self._client = LazyClient(self.provider, entry.hub_id, f"rewriter {entry.name}")
        self.requested = 0
        self.cached = 0
        self.reported: Counter[str] = Counter()
        self.finish: Counter[str] = Counter()

    def payload(self, query: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.entry.options["model"],
            "messages": [{"role": "user", "content": self.entry.prompt.format(query=query)}],
        }
        if self.entry.max_new_tokens:
            body["max_completion_tokens"] = int(self.entry.max_new_tokens)
        body.update({k: v for k, v in sorted(self.entry.options.items()) if k not in NOT_SENT})
        return body

    def rewrite(self, queries: Sequence[str]) -> list[str]:
        bodies = [self.payload(q) for q in queries]
        keys = [payload_key(b) for b in bodies]
        stored = self.responses.records
        todo = list(dict.fromkeys(k for k in keys if k not in stored))
        if todo and self.offline:
            raise OfflineMiss(sum(k not in stored for k in keys), str(self.responses.dir or "memory"))
        self.cached += len(keys) - sum(k not in stored for k in keys)
        if todo:
            self._request(todo, dict(zip(keys, zip(bodies, queries, strict=True), strict=True)))
        return [stored[k]["text"] for k in keys]

    def _request(self, todo: list[str], by_key: dict[str, tuple[dict[str, Any], str]]) -> None:
        client = self._client.get(
            f"{len(todo)} quer(ies) are not in the response cache ({self.responses.dir or 'memory'})"
        )
        whats = [describe_query(by_key[k][1]) for k in todo]
        results = client.post_all([by_key[k][0] for k in todo], whats, lambda r, what: self._parse(r, what, client))
        done = {k: v for k, v in zip(todo, results, strict=True) if not isinstance(v, TriadError)}
        self.responses.put(done)
        self.requested += len(done)
        self.reported.update(v["model"] for v in done.values())
        self.finish.update(str(v.get("finish_reason")) for v in done.values())
        raise_failures(results, "quer(ies)")

    def _parse(self, response: Any, what: str, client: JsonClient) -> dict[str, Any]:
        choices = response.get("choices") if isinstance(response, dict) else None
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        message = first.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise client.fail(what, "malformed response: no choices[0].message.content text")
        reported = response.get("model")
        return {
            "text": content.strip(),
            "model": reported if isinstance(reported, str) else "",
            "finish_reason": first.get("finish_reason"),
        }

    def api_stats(self) -> dict[str, Any]:
        calls = self._client.stats()
        return {
            "responses_requested": self.requested,
            "responses_cached": self.cached,
            "reported_models": dict(self.reported),
            "finish_reasons": dict(self.finish),
            **calls,
        }


def load(
    entry: Any, path: str, *, device: str = "cpu", responses: RecordCache | None = None, offline: bool = False
) -> ChatRewriter:
    """The family loader (`registry.load`; API entries are rewriters); `responses` / `offline` come from
    `triad rewrite`."""
    return ChatRewriter(entry, responses=responses, offline=offline)
