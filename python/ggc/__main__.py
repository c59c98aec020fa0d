"""`python -m ggc cache [--info | --clear]`: the kernel cache on disk.
`python -m ggc info FILE.mlir ...`: what each kernel of gg IR files
compiles to: its tile configuration, shared memory, registers and spills.
`python -m ggc precompile ...`: a MoE layer's or a Hugging Face model's
kernels for up to --max-tokens tokens, compiled into the disk cache ahead
of serving (ggc.moe.warmup; no GPU needed)."""

from __future__ import annotations

import argparse
import sys

from . import cache, compiler


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ggc")
    commands = parser.add_subparsers(dest="command", required=True)
    on_cache = commands.add_parser("cache", help="the compiled-kernel cache on disk")
    action = on_cache.add_mutually_exclusive_group()
    action.add_argument("--info", action="store_true", help="where it is and its size "
                        "(the default)")
    action.add_argument("--clear", action="store_true", help="remove every entry")
    on_info = commands.add_parser("info", help="config, shared memory, registers and "
                                  "spills of each kernel of gg IR files")
    on_info.add_argument("files", nargs="+")
    _precompile_arguments(commands.add_parser(
        "precompile", help="compile a MoE layer's or model's kernels into the disk cache "
        "ahead of serving", description="Compiles every kernel a MoE layer's forward "
        "needs for 1 to --max-tokens tokens a call, into the disk cache, without a GPU. "
        "Describe the layer, or name a Hugging Face model (--model: its config alone; no "
        "weights are read)."))
    args = parser.parse_args(argv)
    if args.command == "info":
        return info(args.files)
    if args.command == "precompile":
        return precompile(args)
    return cache_command(args.clear)


def cache_command(clear: bool) -> int:
    folder = cache.cache_dir()
    if folder is None:
        print("ggc: the disk cache is off (GGC_CACHE_DIR=off)")
        return 0
    try:
        if clear:
            print(f"ggc: removed {cache.clear(folder)} kernels from {folder}")
            return 0
        found = cache.entries(folder)
        total = sum(size for _, size, _ in found)
        print(f"ggc: {folder}: {len(found)} kernels, {total / (1 << 20):.1f} MB of at most "
              f"{cache.max_bytes() / (1 << 20):.0f} MB (GGC_CACHE_MAX_MB)")
    except (OSError, ValueError) as e:  # a read-only folder, a bad GGC_CACHE_MAX_MB
        print(f"ggc: error: {e}", file=sys.stderr)
        return 1
    return 0


def info(files) -> int:
    """One line per kernel; the cubin stage when ptxas is there (registers
    and spills come from it), else PTX."""
    from .compiler import CompilationError
    from .runtime import compile_for_launch
    status = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        try:
            compiled, _ = compile_for_launch(text, source_name=path)
        except CompilationError as e:
            print(f"{path}: {str(e).splitlines()[0]}")
            status = 1
            continue
        configs = [plan["attributes"].get("config", "?") for plan in compiled.plans]
        for i, kernel in enumerate(compiled.kernel_info):
            r = compiled.resources.get(kernel["name"], {})
            regs = (f"{r['registers']} registers, {r['spill_store_bytes']} + "
                    f"{r['spill_load_bytes']} bytes spilled (stores + loads)"
                    if "registers" in r else "registers unknown (no ptxas)")
            print(f"{path}: {kernel['name']}: {configs[i] if i < len(configs) else '?'}, "
                  f"{kernel['shared_bytes']} bytes of shared memory, {regs}")
    return status


def _precompile_arguments(sub: argparse.ArgumentParser) -> None:
    layer = sub.add_argument_group("the layer (or --model)")
    layer.add_argument("--model", help="a Hugging Face model's folder, or its id in the "
                       "local Hugging Face cache (Mixtral, Qwen3-MoE, DeepSeek-V3, gpt-oss)")
    for name, what in (("experts", "E, routed experts"), ("top-k", "experts per token"),
                       ("hidden", "H, the hidden size"),
                       ("intermediate", "I, an expert's intermediate size")):
        layer.add_argument(f"--{name}", type=int, help=what)
    layer.add_argument("--shared-experts", type=int, default=0,
                       help="shared experts, each of size I (DeepSeek-V3's)")
    layer.add_argument("--activation", default="swiglu", help="default: swiglu")
    layer.add_argument("--expert-bias", action="store_true",
                       help="experts with biases (gpt-oss)")
    sub.add_argument("--max-tokens", type=int, required=True,
                     help="the most tokens one call of a layer takes (a rank's, with --ranks)")
    sub.add_argument("--fp8", action="store_true", help="FP8 experts (128x128 block scales)")
    sub.add_argument("--ranks", type=int, help="expert-parallel over this many ranks "
                     "(ExpertParallelMoE, the default placement)")
    where = sub.add_argument_group("what the kernels are for (default: this machine's "
                                   "GPU, else sm_90a, 132 SMs, the target's shared memory, "
                                   "DRAM bandwidth unknown)")
    where.add_argument("--target", help=f"one of {', '.join(compiler.TARGETS)}")
    where.add_argument("--num-sms", type=int, help="the serving GPU's SMs (H100/H200 SXM: 132)")
    where.add_argument("--shared-memory-bytes", type=int,
                       help="the serving GPU's opt-in shared memory per block "
                       "(H100/H200: 232448), as a process there plans with")
    where.add_argument("--memory-gbps", type=int,
                       help="the serving GPU's peak DRAM bandwidth in GB/s (H100 SXM: "
                       "3352, H200: 4915; 0: unknown), as a process there plans with")
    sub.add_argument("--jobs", type=int, help="kernels compiled at once (default: the CPUs, "
                     "at most 8)")
    sub.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="a progress bar (default: on a terminal)")


def precompile(args) -> int:
    """`python -m ggc precompile`: one line per kernel, then a summary."""
    try:
        shapes = _precompile_shapes(args)
        if args.target:
            compiler.set_target(args.target)
        if args.num_sms is not None:
            compiler.set_num_sms(args.num_sms)
        if args.shared_memory_bytes is not None:
            compiler.set_shared_memory_bytes(args.shared_memory_bytes)
        if args.memory_gbps is not None:
            compiler.set_memory_gbps(args.memory_gbps)
        from .moe.precompile import warmup
        report = warmup(shapes, args.max_tokens, progress=args.progress, jobs=args.jobs)
    except (ValueError, NotImplementedError, OSError, ImportError) as e:
        # A bad size, an unknown target, a config not found or unsupported.
        print(f"ggc precompile: error: {e}", file=sys.stderr)
        return 1
    for kernel in report.kernels:
        print(f"{kernel.source:>8} {kernel.ms:7.0f} ms  {kernel.specialisation}")
    folder = cache.cache_dir()
    print(f"ggc: {report}; " + (f"cached in {folder}" if folder else
                                "the disk cache is off (GGC_CACHE_DIR): nothing is kept"))
    return 0


def _precompile_shapes(args) -> list:
    """The LayerShapes the command line describes."""
    from .moe.precompile import config_shapes, layer_shapes_of
    sizes = ("experts", "top_k", "hidden", "intermediate")
    if args.model and any(getattr(args, n) is not None for n in sizes):
        raise ValueError("name --model or give the layer's sizes, not both")
    if args.model:
        from transformers import AutoConfig
        # Offline: the config only, from a folder or the local cache.
        config = AutoConfig.from_pretrained(args.model, local_files_only=True)
        return config_shapes(config, args.fp8, args.ranks)
    missing = [f"--{n.replace('_', '-')}" for n in sizes if getattr(args, n) is None]
    if missing:
        raise ValueError(f"describe the layer ({', '.join(missing)} missing) or name --model")
    return layer_shapes_of(args.hidden, args.intermediate, args.experts, args.top_k,
                           shared_experts=args.shared_experts, activation=args.activation,
                           fp8=args.fp8, expert_bias=args.expert_bias, ranks=args.ranks)


if __name__ == "__main__":
    sys.exit(main())
