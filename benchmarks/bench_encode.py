"""The runner's encode phase against the bare model on the same inputs, same batch size and threads.

1. `minilm` (real weights) on the configs of a TRIAD mini edition, each side a fresh process, all sides interleaved
   `--repeats` times: the runner's `encode_items` with torch float32 on N workers of one thread and in one process
   of N threads (OMP_WAIT_POLICY=PASSIVE, as `triad` sets it), with ONNX Runtime the same two ways (its graph and
   feed exported once before the timed runs and loaded without torch, as a cached re-run does), bare
   `SentenceTransformer.encode` of the very texts the runner feeds on N threads and on one, and with `--bf16` /
   `--baseline DIR` further runner sides. Per side: CPU seconds (`time.process_time` of the side's process plus its
   ended children) of the encode phase and of the whole side (imports + load + encode), medians and ranges, each
   against bare on N threads, and each side's share of the machine's limit, measured in the same run: a GEMM side
   (fp32 `torch.matmul` 4096^3 on one thread, GFLOP per CPU-second) gives the CPU-seconds the encoded tokens' FLOPs
   (2 x the transformer layers' parameters per token + attention) cost at that rate; share = that / the side's
   CPU-seconds. Then ONNX and bfloat16 cosines to torch float32, and padded tokens per item for three orders.
2. Tiny CLIP and tiny Qwen3-VL (random weights, real architecture classes) on `--images` inputs with 800x600 JPEGs:
   the runner's `encode_items` against the pipeline limit, the slower of (a) the bare forward on ready tensors and
   (b) the preprocessing (decode, resize, tokenize: the encoder's `prepare`) alone on every core; in-process. On a
   CPU both use the same cores, so the limit is reachable only where one of them is negligible; the table also
   shows 1/(1/a + 1/b), the rate when the two take turns on the cores (on CUDA the forward leaves them).

    python benchmarks/bench_encode.py --data demo_output/triad [--configs C,..] [--repeats 3] [--device cuda]
        [--baseline DIR] [--onnx-spin] [--bf16]

On CUDA (`--device cuda`, or benchmarks/gpu_check.sh) the same sides run on the GPU.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BATCH = 64  # minilm's registry batch size, both sides


def _env(code: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(code),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


# --- minilm: one side per process ---------------------------------------------------------------------------------
def runner_side(
    data: str,
    threads: int,
    device: str,
    dtype: str = "float32",
    graph: str | None = None,
    configs: list[str] | None = None,
    spin: bool = False,
    processes: int | None = None,
) -> dict[str, Any]:
    """The runner's encode phase of `configs` (default all; `graph`: the ONNX backend, its graph in that folder,
    loaded without torch when its feed is cached; `spin`: its idle threads spinning; `processes`: worker processes,
    None the runner's default); the plan is built first (not timed: it is the plan phase)."""
    sys.path.insert(0, os.getcwd())
    from model_adapters.planning.plan import plan_triad
    from triad_dataset.contract.names import TASK_CONFIGS

    plan = plan_triad(data, configs or list(TASK_CONFIGS), variant="full", limit=None, sees_images=False)
    keys = list(plan.items)
    start, cpu = time.perf_counter(), cpu_seconds()
    encoder = None
    if graph is not None and not spin:
        from model_adapters.families import onnx_text

        encoder = getattr(onnx_text, "load_cached", lambda folder: None)(graph)  # the cached ONNX re-run's load
    if encoder is None:
        import torch

        torch.set_num_threads(threads)
        from model_adapters.models.registry import get_entry, load_encoder

        encoder = load_encoder(get_entry("minilm"), device=device, dtype=dtype)
    if graph is not None and not hasattr(encoder, "spec"):
        from model_adapters.families import onnx_text

        if spin:  # the shipped session, but its idle threads spin (ONNX Runtime's own default)
            onnx_text.session = functools.partial(onnx_text.session, spin=True)
        encoder = onnx_text.wrap(encoder, graph, "minilm", log=False)
    from model_adapters.vectors.encoding import encode_items

    names = encode_items.__code__.co_varnames
    kwargs: dict[str, Any] = {"device": device} if "device" in names else {}
    if "processes" in names:
        kwargs["processes"] = processes
    loaded, cpu_loaded = time.perf_counter(), cpu_seconds()
    _, stats = encode_items(
        encoder, keys, plan.items, model="minilm", batch_size=BATCH, cache=None, show_progress=False, **kwargs
    )
    end, cpu_end = time.perf_counter(), cpu_seconds()
    summary = getattr(stats, "summary", None) or getattr(stats, "figures", None)  # an older checkpoint: `figures`
    return {
        "items": len(keys),
        "seconds": end - start,
        "cpu_seconds": cpu_end - cpu,
        "encode_seconds": end - loaded,
        "encode_cpu_seconds": cpu_end - cpu_loaded,
        "torch_imported": "torch" in sys.modules,
        "padding": summary() if summary else {},
    }


def cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its ended children (worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def bare_side(texts_file: str, threads: int, device: str) -> dict[str, Any]:
    with open(texts_file, encoding="utf-8") as handle:
        texts = json.load(handle)
    start, cpu = time.perf_counter(), cpu_seconds()
    import torch

    torch.set_num_threads(threads)
    from sentence_transformers import SentenceTransformer

    from model_adapters.models.registry import get_entry, resolve_path

    model = SentenceTransformer(resolve_path(get_entry("minilm")), device=device)
    loaded, cpu_loaded = time.perf_counter(), cpu_seconds()
    model.encode(texts, batch_size=BATCH, convert_to_numpy=True, show_progress_bar=False)
    end, cpu_end = time.perf_counter(), cpu_seconds()
    return {
        "items": len(texts),
        "seconds": end - start,
        "cpu_seconds": cpu_end - cpu,
        "encode_seconds": end - loaded,
        "encode_cpu_seconds": cpu_end - cpu_loaded,
    }


def runner_texts(data: str, configs: list[str] | None = None) -> tuple[list[str], list[str]]:
    """The texts the runner hands minilm (no prompts: `join_instruction` on both sides) and each item's role."""
    from model_adapters.planning.inputs import join_instruction
    from model_adapters.planning.plan import plan_triad
    from triad_dataset.contract.names import TASK_CONFIGS

    plan = plan_triad(data, configs or list(TASK_CONFIGS), variant="full", limit=None, sees_images=False)
    texts, roles = [], []
    for key in plan.items:
        item = plan.items[key]
        texts.append(join_instruction(item.model_input.instruction, item.model_input.text))
        roles.append(item.role)
    return texts, roles


def padding_table(texts: list[str], roles: list[str]) -> dict[str, float]:
    """Padded tokens per item for three orders of the same texts, batches of BATCH, minilm's tokenizer."""
    from transformers import AutoTokenizer

    from model_adapters.models.registry import get_entry, resolve_path
    from model_adapters.vectors.schedule import padded_tokens

    tok = AutoTokenizer.from_pretrained(resolve_path(get_entry("minilm")))
    lengths = [len(ids) for ids in tok(texts, truncation=True, max_length=256)["input_ids"]]
    idx = range(len(texts))

    def per_item(order: list[int], by_role: bool) -> float:
        total = 0
        for role in sorted(set(roles)) if by_role else [None]:
            rows = [i for i in order if role is None or roles[i] == role]
            total += padded_tokens([lengths[i] for i in rows], BATCH)
        return round(total / len(texts), 2)

    return {
        "tokens_per_item": round(sum(lengths) / len(texts), 2),
        "runner, token count (this commit)": per_item(sorted(idx, key=lambda i: (lengths[i], i)), True),
        "runner, text length (before token buckets)": per_item(sorted(idx, key=lambda i: (len(texts[i]), i)), True),
        "bare sentence-transformers (text length, one call)": per_item(
            sorted(idx, key=lambda i: -len(texts[i])), False
        ),
    }


BARE = "bare SentenceTransformer.encode, N threads"
RUNNER = "runner, torch, N single-threaded workers (opt-in)"
GEMM_N = 4096


def gemm_side() -> dict[str, Any]:
    """fp32 `torch.matmul` of two 4096x4096 matrices on one thread: GFLOP per CPU-second, best of 3 (after one
    warm-up product)."""
    import torch

    torch.set_num_threads(1)
    a, b = torch.randn(GEMM_N, GEMM_N), torch.randn(GEMM_N, GEMM_N)
    torch.matmul(a, b)
    rates = []
    for _ in range(3):
        cpu = time.process_time()
        torch.matmul(a, b)
        rates.append(2 * GEMM_N**3 / (time.process_time() - cpu) / 1e9)
    return {"gflop_per_cpu_s": max(rates), "all": rates}


def minilm_flops(lengths: list[int]) -> tuple[float, float]:
    """FLOPs of minilm on inputs of `lengths` tokens: (2 x the transformer layers' parameters per token, the
    attention products: QK^T and AV, 4 x layers x hidden x length^2 per input); the embedding lookups are free."""
    from transformers import AutoConfig, AutoModel

    from model_adapters.models.registry import get_entry, resolve_path

    path = resolve_path(get_entry("minilm"))
    config = AutoConfig.from_pretrained(path)
    params = sum(p.numel() for p in AutoModel.from_pretrained(path).encoder.parameters())
    attention = 4 * config.num_hidden_layers * config.hidden_size * sum(n * n for n in lengths)
    return float(2 * params * sum(lengths)), float(attention)


def token_lengths(texts: list[str]) -> list[int]:
    """Tokens per text as minilm sees them (special tokens included, cut at its limit)."""
    from transformers import AutoTokenizer

    from model_adapters.models.registry import get_entry, resolve_path

    tok = AutoTokenizer.from_pretrained(resolve_path(get_entry("minilm")))
    return [len(ids) for ids in tok(texts, truncation=True, max_length=256)["input_ids"]]


def table(runs: dict[str, list[dict[str, Any]]], floor: float) -> None:
    """Per side: CPU-s of the encode phase and of the whole side (medians, min-max), per item, against bare, and the
    share of the GEMM limit (`floor`: the CPU-s the encoded tokens cost at the limit / the side's CPU-s)."""
    med = statistics.median
    enc = {n: [r["encode_cpu_seconds"] for r in rs] for n, rs in runs.items()}
    whole = {n: [r["cpu_seconds"] for r in rs] for n, rs in runs.items()}
    items = next(iter(runs.values()))[0]["items"]
    print(
        "| side | encode CPU-s median (min-max) | CPU ms/item | x bare | share of the limit | whole side CPU-s "
        "median (min-max) | x bare | share | items/s (wall, whole side) | torch imported |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    for name, rs in runs.items():
        e, w = med(enc[name]), med(whole[name])
        rate = med([r["items"] / r["seconds"] for r in rs])
        print(
            f"| {name} | {e:.2f} ({min(enc[name]):.2f}-{max(enc[name]):.2f}) | {1000 * e / items:.2f} | "
            f"{e / med(enc[BARE]):.2f}x | {floor / e:.2f} | {w:.2f} ({min(whole[name]):.2f}-{max(whole[name]):.2f}) | "
            f"{w / med(whole[BARE]):.2f}x | {floor / w:.2f} | {rate:.0f} | {rs[-1].get('torch_imported', True)} |"
        )


def _side(name: str, code: Path, extra: list[str], args: argparse.Namespace, env: dict[str, str] | None = None) -> Any:
    """Run one side in a fresh process; its JSON line."""
    threads = [] if "--threads" in extra else ["--threads", str(args.threads)]
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_encode.py"), *extra, *threads, "--device", args.device]
    out = subprocess.run(cmd, env={**_env(code), **(env or {})}, cwd=code, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{name} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE"}  # what `triad` sets before torch is imported


def sides_of(args: argparse.Namespace, runner: list[str], texts_file: str, graph: str) -> dict[str, Any]:
    """The minilm sides: (code, arguments, environment) each."""
    sides: dict[str, Any] = {
        RUNNER: (ROOT, runner, PASSIVE),
        "runner, torch, 1 process x N threads": (ROOT, [*runner, "--processes", "1"], PASSIVE),
        BARE: (ROOT, ["--side", "bare", "--texts", texts_file], {}),
        "bare SentenceTransformer.encode, 1 thread": (
            ROOT,
            ["--side", "bare", "--texts", texts_file, "--threads", "1"],
            {},
        ),
    }
    if args.device == "cpu":  # the ONNX backend runs on the CPU only
        sides["runner, ONNX, N single-threaded workers (opt-in), no torch"] = (ROOT, [*runner, "--graph", graph], {})
        sides["runner, ONNX, 1 process x N threads, no torch"] = (
            ROOT,
            [*runner, "--graph", graph, "--processes", "1"],
            {},
        )
        if args.onnx_spin:
            sides["runner, ONNX, 1 process, idle threads spinning"] = (
                ROOT,
                [*runner, "--graph", graph, "--spin", "--processes", "1"],
                {},
            )
    if args.bf16:
        sides["runner, torch bfloat16 (--dtype bfloat16)"] = (ROOT, [*runner, "--dtype", "bfloat16"], PASSIVE)
    if args.baseline:
        sides["runner before (--baseline)"] = (Path(args.baseline), runner, {})
    return sides


def minilm(args: argparse.Namespace) -> None:
    configs = args.configs.split(",") if args.configs else None
    texts, roles = runner_texts(args.data, configs)
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = os.path.join(tmp, "texts.json")
        with open(texts_file, "w", encoding="utf-8") as handle:
            json.dump(texts, handle)
        runner = ["--side", "runner", "--data", args.data, *(["--configs", args.configs] if args.configs else [])]
        sides = sides_of(args, runner, texts_file, tmp)
        if args.device == "cpu":  # export the graph and its feed once, untimed: a re-run finds them in its cache
            _side("ONNX export", ROOT, [*runner, "--graph", tmp, "--processes", "1"], args)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
        gemm: list[float] = []
        for _ in range(args.repeats):
            gemm.append(_side("GEMM", ROOT, ["--side", "gemm"], args)["gflop_per_cpu_s"])
            for name, (code, extra, env) in sides.items():
                runs[name].append(_side(name, code, extra, args, env))
            loads.append(_load())
    lengths = token_lengths(texts)
    linear, attention = minilm_flops(lengths)
    limit = max(gemm)
    floor = (linear + attention) / (limit * 1e9)
    print(
        f"\nminilm, {len(texts)} distinct texts of the TRIAD mini edition ({args.configs or 'every config'}), batch "
        f"{BATCH}, N = {args.threads}, {args.device}, each side a fresh process (imports + model load + encode), "
        f"{args.repeats} interleaved runs, 1-min load {min(loads)}-{max(loads)} (at each round: {', '.join(loads)})"
    )
    print(
        f"GEMM limit (fp32 torch.matmul {GEMM_N}^3, one thread, best of 3 per round): {limit:.1f} GFLOP per CPU-s "
        f"(rounds: {', '.join(f'{g:.1f}' for g in gemm)}); the encoded tokens: {sum(lengths)}, "
        f"{(linear + attention) / 1e9:.1f} GFLOP (attention {100 * attention / (linear + attention):.1f} %), so "
        f"encoding them costs at least {floor:.2f} CPU-s"
    )
    table(runs, floor)
    if args.device == "cpu":
        agreement(texts[:: max(1, len(texts) // 2000)], roles[:: max(1, len(texts) // 2000)])
    print("\npadded tokens per item (tokens the batches computed / items):")
    for name, value in padding_table(texts, roles).items():
        print(f"  {name}: {value}")
    print(f"  runner's own count (results.json encoding): {runs[RUNNER][-1]['padding']}")


def agreement(texts: list[str], roles: list[str]) -> None:
    """Cosine of the ONNX float32 and torch bfloat16 vectors to torch float32's, on these texts (in-process)."""
    import numpy as np

    from model_adapters.families.onnx_text import wrap
    from model_adapters.models.registry import get_entry, load_encoder
    from model_adapters.protocol import ModelInput

    items = [ModelInput(t, None, None) for t in texts]

    def encode(encoder: Any) -> Any:
        return np.concatenate([encoder.encode_candidates(items[i : i + BATCH]) for i in range(0, len(items), BATCH)])

    fp32 = load_encoder(get_entry("minilm"), dtype="float32")
    want = encode(fp32)
    with tempfile.TemporaryDirectory() as tmp:
        others = {"ONNX float32": encode(wrap(fp32, tmp, "minilm", log=False))}
    others["torch bfloat16"] = encode(load_encoder(get_entry("minilm"), dtype="bfloat16"))
    print(f"\ncosine to torch float32, {len(texts)} of the texts ({sorted(set(roles))}):")
    for name, got in others.items():
        cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        print(f"  {name}: min {cos.min():.8f}, median {np.median(cos):.8f}")


# --- tiny image models: in-process --------------------------------------------------------------------------------
def jpeg(seed: int, size: tuple[int, int] = (800, 600)) -> bytes:
    """A photo-like 800x600 JPEG (smooth gradients + noise, quality 90)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    w, h = size
    x, y = np.meshgrid(np.linspace(0, 1, w), np.linspace(0, 1, h))
    base = np.stack([x * rng.uniform(50, 255), y * rng.uniform(50, 255), (x + y) / 2 * rng.uniform(50, 255)], -1)
    pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype("uint8")
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def pipeline_limit(args: argparse.Namespace) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from model_adapters.models.registry import get_entry, load_encoder
    from model_adapters.planning.plan import Item
    from model_adapters.protocol import ModelInput
    from model_adapters.vectors.encoding import encode_items, preparer_threads

    torch.set_num_threads(args.threads)
    images = [jpeg(i) for i in range(args.images)]
    words = [
        *("red", "blue", "leather", "cotton", "sleeve", "collar", "wheel"),
        *("sedan", "coupe", "vintage", "modern", "small", "large"),
    ]
    inputs = [
        ModelInput(" ".join(words[(i * 7 + j) % len(words)] for j in range(3 + i % 9)), images[i])
        for i in range(args.images)
    ]
    items = {f"k{i:05d}": Item("candidate", m, f"item {i}") for i, m in enumerate(inputs)}
    cores = preparer_threads(args.device)
    print(
        f"\ntiny models, {args.images} inputs with 800x600 JPEGs, {args.threads} torch threads, {args.device}, "
        f"preprocessing on {cores} threads, {args.repeats} interleaved runs, load {_load()}"
    )
    print(
        "| model | batch | forward alone (items/s) | preprocessing alone | pipeline limit (the slower) | the two "
        "sharing the cores, 1/(1/a+1/b) | runner | runner / limit | runner / shared |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name in ("tiny-random-clip", "tiny-random-vlm"):
        entry = get_entry(name)
        encoder = load_encoder(entry, device=args.device)
        size = entry.max_batch
        batches = [inputs[i : i + size] for i in range(0, len(inputs), size)]
        fwd, pre, run = [], [], []
        encoder.forward(encoder.prepare(batches[0], "candidate"), "candidate")  # warm-up (first-call costs)
        for _ in range(args.repeats):
            with ThreadPoolExecutor(cores) as pool:
                t = time.perf_counter()
                prepared = list(pool.map(encoder.prepare, batches, ["candidate"] * len(batches)))
                pre.append(len(inputs) / (time.perf_counter() - t))
            t = time.perf_counter()
            for p in prepared:
                encoder.forward(p, "candidate")
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            fwd.append(len(inputs) / (time.perf_counter() - t))
            t = time.perf_counter()
            encode_items(
                encoder,
                list(items),
                items,
                model=name,
                batch_size=size,
                cache=None,
                show_progress=False,
                device=args.device,
            )
            run.append(len(inputs) / (time.perf_counter() - t))
        f, p, r = (statistics.median(v) for v in (fwd, pre, run))
        limit, shared = min(f, p), 1 / (1 / f + 1 / p)  # on a CPU the forward and the preprocessing share the cores
        print(
            f"| {name} | {size} | {f:.1f} | {p:.1f} | {limit:.1f} | {shared:.1f} | {r:.1f} (min {min(run):.1f}, "
            f"max {max(run):.1f}) | {r / limit:.2f} | {r / shared:.2f} |"
        )


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="a TRIAD mini edition (triad build mini; make demo writes demo_output/triad)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", help="comma-separated TRIAD configs whose texts are encoded (default: all)")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--images", type=int, default=128, help="inputs with images for the tiny models")
    ap.add_argument("--baseline", help="a checkout of an older commit: its runner as a third minilm side")
    ap.add_argument("--only", choices=("minilm", "images"))
    ap.add_argument("--side", choices=("runner", "bare", "gemm"), help=argparse.SUPPRESS)
    ap.add_argument("--processes", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bf16", action="store_true", help="a further side: the runner with torch bfloat16 weights")
    ap.add_argument("--texts", help=argparse.SUPPRESS)
    ap.add_argument("--dtype", default="float32", help=argparse.SUPPRESS)
    ap.add_argument("--graph", help=argparse.SUPPRESS)
    ap.add_argument("--spin", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--onnx-spin", action="store_true", help="a further side: the ONNX session with its idle threads spinning"
    )
    args = ap.parse_args()
    if args.side == "runner":
        configs = args.configs.split(",") if args.configs else None
        print(
            json.dumps(
                runner_side(
                    args.data, args.threads, args.device, args.dtype, args.graph, configs, args.spin, args.processes
                )
            )
        )
        return
    if args.side == "gemm":
        print(json.dumps(gemm_side()))
        return
    if args.side == "bare":
        print(json.dumps(bare_side(args.texts, args.threads, args.device)))
        return
    sys.path.insert(0, str(ROOT))
    from tests.doubles.declare import declare

    declare()  # the tiny-random-* entries are test doubles, declared by the tests (tests/doubles/)
    args.data = os.path.abspath(args.data) if args.data else None
    if args.only != "images":
        if not args.data:
            sys.exit("--data: a TRIAD mini edition (triad build mini --out DIR, or make demo)")
        minilm(args)
    if args.only != "minilm":
        pipeline_limit(args)


if __name__ == "__main__":
    main()
