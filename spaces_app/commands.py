"""`triad space`: start the leaderboard locally, or submit a run folder to a local leaderboard database."""

from __future__ import annotations

import argparse
import os
from typing import Any

from spaces_app import bundle
from spaces_app.settings import DEFAULT_ARK, DEFAULT_DB, DEFAULT_TRIAD

# `triad space --submit` exit codes (docs/space.md): a rejection is a refused input, 2, as everywhere in `triad`
ACCEPTED, REJECTED, DUPLICATE = 0, 2, 3

USAGE = """triad space [--data DIR] [--ark-data DIR] [--db FILE] [--port N] [--host H]   serve the leaderboard
       triad space --submit RUN_DIR --model-name NAME [--model-link URL] [--family F] [--params N] [--db FILE]
       triad space bundle --out DIR       a ready-to-push Space folder
       triad space verify (--id N | --pending) ...   the reproduction check
       triad space rescore --db FILE [--data DIR] [--ark-data DIR]   recompute stored rows' diagnostics"""
EPILOG = (
    "--submit exits 0 when the run is accepted, 3 when it repeats a stored submission (nothing is stored), 2 when "
    "it is rejected (one line on stderr says why; nothing is stored)."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "space",
        help="run the leaderboard Space locally (or submit a run to its database)",
        usage=USAGE,
        epilog=EPILOG,
    )
    p.add_argument("--data", help=f"TRIAD gold folder (env TRIAD_SPACE_DATA, default {DEFAULT_TRIAD})")
    p.add_argument("--ark-data", help=f"ARK gold folder (env TRIAD_SPACE_ARK_DATA, default {DEFAULT_ARK})")
    p.add_argument("--db", help=f"SQLite database (env TRIAD_SPACE_DB, default {DEFAULT_DB})")
    p.add_argument("--port", type=int, help="port (env GRADIO_SERVER_PORT, default 7860)")
    p.add_argument("--host", help="interface to bind (env GRADIO_SERVER_NAME, default 127.0.0.1)")
    p.add_argument("--submit", metavar="RUN_DIR", help="instead of serving: submit this `triad run` folder and exit")
    p.add_argument("--model-name", help="with --submit: the name shown on the leaderboard")
    p.add_argument("--model-link", default="", help="with --submit: http(s) link to the model")
    p.add_argument("--family", default="other", help="with --submit: model family")
    p.add_argument("--params", default="", help="with --submit: parameter count (e.g. 86M)")
    p.set_defaults(handler=_handle)
    sub = p.add_subparsers(dest="space_command", title="subcommands", metavar="{bundle,verify,rescore}")
    bundle.register(sub)  # `triad space bundle --out DIR`
    v = sub.add_parser(
        "verify", help="make the leaderboard's own runs of the models pending rows name, and judge the rows"
    )
    which = v.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=int, help="check this submission (again)")
    which.add_argument("--pending", action="store_true", help="check every pending submission")
    v.add_argument("--db", help=f"the leaderboard database to read and update (default {DEFAULT_DB})")
    v.add_argument("--url", help="instead of --db: a running Space (its admin-token API)")
    v.add_argument("--token", help="with --url: the admin token (or env TRIAD_SPACE_ADMIN_TOKEN)")
    v.add_argument("--data", help=f"TRIAD dataset folder with the images (default {DEFAULT_TRIAD})")
    v.add_argument("--ark-data", help=f"ARK dataset folder (default {DEFAULT_ARK})")
    v.add_argument("--device", default="cpu", help="device for the model (cpu, cuda, cuda:1, ...)")
    v.set_defaults(handler=_verify)
    r = sub.add_parser("rescore", help="recompute stored rows' summaries and diagnostics from their kept rankings")
    r.add_argument("--db", required=True, help="the leaderboard database to update")
    r.add_argument("--data", help=f"TRIAD gold folder the rows were scored on (default {DEFAULT_TRIAD})")
    r.add_argument("--ark-data", help=f"ARK gold folder (default {DEFAULT_ARK})")
    r.set_defaults(handler=_rescore)


def _apply_env(args: argparse.Namespace) -> None:
    for flag, var in (
        ("data", "TRIAD_SPACE_DATA"),
        ("ark_data", "TRIAD_SPACE_ARK_DATA"),
        ("db", "TRIAD_SPACE_DB"),
        ("port", "GRADIO_SERVER_PORT"),
        ("host", "GRADIO_SERVER_NAME"),
    ):
        value = getattr(args, flag)
        if value is not None:
            os.environ[var] = str(value)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def _handle(args: argparse.Namespace) -> int:
    _apply_env(args)
    from spaces_app.settings import Settings

    settings = Settings.from_env()
    if args.submit:
        from spaces_app.submit import submit_run_dir
        from triad_dataset.contract.errors import TriadError

        if not args.model_name:
            raise TriadError("--submit needs --model-name")
        outcome = submit_run_dir(
            settings.db_path,
            {"triad": settings.triad_dir, "ark": settings.ark_dir},
            args.submit,
            model_name=args.model_name,
            model_link=args.model_link,
            family=args.family,
            params=args.params,
        )  # the local owner, as the demo and a local browser
        print(outcome.message)
        return submit_exit_code(outcome)
    from spaces_app.gold import require_gold

    require_gold({"triad": settings.triad_dir, "ark": settings.ark_dir})  # before Gradio is even imported
    from spaces_app.app import launch

    launch(settings)
    return 0


def submit_exit_code(outcome: Any) -> int:
    """ACCEPTED (0), DUPLICATE (3: the same rankings are stored already) or REJECTED (2) for a submission outcome."""
    if outcome.accepted:
        return ACCEPTED
    return DUPLICATE if outcome.existing_id is not None else REJECTED


def _gold_folders(args: argparse.Namespace) -> dict[str, Any]:
    """The gold folders named by --data / --ark-data, the environment or the defaults; those with an audit.json."""
    from pathlib import Path

    folders = {
        "triad": Path(args.data or os.environ.get("TRIAD_SPACE_DATA") or DEFAULT_TRIAD),
        "ark": Path(args.ark_data or os.environ.get("TRIAD_SPACE_ARK_DATA") or DEFAULT_ARK),
    }
    return {b: f for b, f in folders.items() if (f / "audit.json").is_file()}


def _rescore(args: argparse.Namespace) -> int:
    """`triad space rescore`: every stored row's summary recomputed from its kept rankings, one line per row."""
    from pathlib import Path

    from spaces_app import rescore
    from spaces_app.gold import GoldStore

    db = rescore.open_db(Path(args.db))
    changed = rescore.rescore(db, GoldStore(_gold_folders(args)), lambda line: print(line, flush=True))
    print(f"rescored: {changed} row(s) changed")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """`triad space verify`: sampled first looks and reference runs for a database file or a Space's admin API;
    exit 1 when any checked submission failed, 0 otherwise (what cannot be checked here is listed and stays
    pending)."""

    from spaces_app import remote
    from spaces_app.gold import GoldStore

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    folders = _gold_folders(args)
    golds = GoldStore(folders)
    db = args.db or (None if args.url else os.environ.get("TRIAD_SPACE_DB") or DEFAULT_DB)
    source = remote.store(
        db=db, url=args.url, token=args.token or os.environ.get("TRIAD_SPACE_ADMIN_TOKEN"), golds=golds
    )
    return remote.run(source, folders, golds, args.id, args.device, remote.cache_for(db))
