"""Plots bench_moe.py's results: per shape, each layer's time against the
token count (CUDA-graph replay where it has one, else eager), with the
floor (the larger of bytes / 4.3 TB/s and FLOPs / 800 TFLOPS).

    python benchmarks/plot_moe.py OUT.png RESULTS.json [RESULTS.json ...]

Needs matplotlib (not a dependency of ggc itself).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += json.load(f)["rows"]
    return rows


def best_us(row):
    return row["graph_us"] if row.get("graph_us") else row["eager_us"]


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    rows = load(paths)
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    colour = {impl: f"C{i}" for i, impl in enumerate(impls)}  # one per layer everywhere
    fig, axes = plt.subplots(1, len(shapes), figsize=(5 * len(shapes), 4.6))
    axes = axes if len(shapes) > 1 else [axes]
    for ax, shape in zip(axes, shapes):
        mine = [r for r in rows if r["shape"] == shape]
        for impl in impls:
            points = sorted((r["tokens"], best_us(r)) for r in mine if r["impl"] == impl)
            if points:
                ax.plot(*zip(*points), marker="o", label=impl, color=colour[impl],
                        linewidth=2.5 if impl.startswith("ggc") else 1.2)
        floor = sorted({(r["tokens"], max(r["floor_mem_us"], r["floor_math_us"]))
                        for r in mine})
        ax.plot(*zip(*floor), "k--", label="floor")
        ax.set(xscale="log", yscale="log", title=shape, xlabel="tokens",
               ylabel="us per layer (graph replay, else eager)")
        ax.grid(True, which="both", alpha=0.3)
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles),
               fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()
