"""`triad space`: start the leaderboard locally, or submit a run folder to a local leaderboard database."""

from __future__ import annotations

import argparse
import os

from spaces_app import bundle
from spaces_app.settings import DEFAULT_ARK, DEFAULT_DB, DEFAULT_TRIAD


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("space", help="run the leaderboard Space locally (or submit a run to its database)")
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
    bundle.register(p)  # `triad space bundle --out DIR`


def _apply_env(args: argparse.Namespace) -> None:
    for flag, var in (("data", "TRIAD_SPACE_DATA"), ("ark_data", "TRIAD_SPACE_ARK_DATA"), ("db", "TRIAD_SPACE_DB"),
                      ("port", "GRADIO_SERVER_PORT"), ("host", "GRADIO_SERVER_NAME")):
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
        outcome = submit_run_dir(settings.db_path, {"triad": settings.triad_dir, "ark": settings.ark_dir}, args.submit,
                                 model_name=args.model_name, model_link=args.model_link, family=args.family,
                                 params=args.params, submitter="cli")
        print(outcome.message)
        return 0
    from spaces_app.gold import require_gold

    require_gold({"triad": settings.triad_dir, "ark": settings.ark_dir})  # before Gradio is even imported
    from spaces_app.app import launch

    launch(settings)
    return 0
