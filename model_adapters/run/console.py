"""What `triad run` prints when it is done: the score tables, the run summary and the notes results.json backs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_adapters.models.identity import describe
from model_adapters.planning import truncation
from model_adapters.ranks import output


def print_results(results: Mapping[str, Any], benchmark: str, out: str) -> None:
    """Print the run's tables and notes on stdout."""
    model = results["model"]
    print(f"\n{benchmark.upper()} · model {describe(model)} · variant {results['variant']}")
    if results.get("warning"):
        print(f"WARNING: {results['warning']}")
    if benchmark == "ark":
        print(output.ark_table(results["configs"], results["summary"].get("macro")))
    else:
        print(output.triad_table(results["configs"]))
    print()
    print(output.summary_table(results["run"]))
    for line in stage_lines(results):
        print(line)
    for line in truncation.warning_lines(results["run"].get("truncated_inputs"), model["name"]):
        print(line)
    for line in output.written_lines(out, results):
        print(line)


def stage_lines(results: Mapping[str, Any]) -> list[str]:
    """Console lines for a generation stage and for API models (what results.json records about them)."""
    lines = []
    gen = results.get("generation")
    if gen is not None:
        lines.append(
            f"generation {gen['generator']} ({gen['key']}): {gen['generated']} generated in "
            f"{gen['generator_calls']} calls, {gen['reused']} reused; {gen['fallback_inputs']} of "
            f"{gen['inputs']} inputs fell back"
        )
    api = results.get("api")
    if api is not None:
        lines.append(
            f"API {api['model_version']}: {api['responses_requested']} responses requested "
            f"({api['retries']} retries), {api['responses_cached']} from the response cache"
        )
    if results.get("reproducible") is False:
        lines.append(
            "NOT REPRODUCIBLE without provider access (an API model or API rewrites made these numbers); the "
            "responses are cached, so the run can be repeated from them (--offline)"
        )
    return lines
