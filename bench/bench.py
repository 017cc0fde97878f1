#!/usr/bin/env python3
"""bench.py — mhaviz's speed against numpy, on inputs generated in the same run.

  bench.py --mhaviz ./mhaviz --forward build/bench_forward [--work DIR] [--quick]

For each shape (class size; GPT-2 small at T = 64 and T = 512; a
Llama-3-8B-shaped layer at T = 1024; all causal) it writes the inputs into
--work (default build/bench: raw float32 for the forward-pass drivers, .npy
and JSON for the CLI), then reports medians of several runs:
  (a) the forward pass: mhaviz (bench_forward) against the same forward pass
      in numpy float32 (numpy_forward.py) on the same data, measured in
      alternating rounds, as a ratio (the Llama shape: both passes, the
      heads and the single wide head, as the CLI runs them);
  (b) the CLI end to end (load, both forward passes, PNGs, reports), its
      peak memory and the size of its output folder; the phase times come
      from mhaviz --timing;
  (c) the forward pass with 1 and with 2 threads;
  (d) achieved GFLOP/s against an estimate of the machine's peak;
and checks the issue's targets against them. It prints markdown tables
(paste them into bench/README.md).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name, T, d_model, n_heads, n_kv_heads, causal, runs per round, rounds, CLI runs,
# forward passes timed (1: the heads; 2: the heads and the wide head), JSON input too
SHAPES = [
    ("class size", 12, 64, 8, 8, 1, 21, 3, 15, 1, True),
    ("GPT-2 small, T=64", 64, 768, 12, 12, 1, 9, 3, 3, 1, True),
    ("GPT-2 small, T=512", 512, 768, 12, 12, 1, 3, 3, 3, 1, True),
    ("Llama-3-8B layer, T=1024", 1024, 4096, 32, 8, 1, 2, 3, 3, 2, False),
]


def write_inputs(folder, T, d, H, KV, causal, seed, with_json):
    """Raw float32 files, .npy files and the JSON inputs (.npy names; inline numbers when with_json)."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    kv = KV * (d // H)
    w = 1.0 / np.sqrt(d)
    arrays = {"x": rng.standard_normal((T, d)),
              "W_q": rng.standard_normal((d, d)) * w, "W_k": rng.standard_normal((d, kv)) * w,
              "W_v": rng.standard_normal((d, kv)) * w, "W_o": rng.standard_normal((d, d)) * w,
              "b_q": rng.standard_normal(d) * 0.1, "b_k": rng.standard_normal(kv) * 0.1,
              "b_v": rng.standard_normal(kv) * 0.1, "b_o": rng.standard_normal(d) * 0.1}
    head = {"tokens": [f"tok{t}" for t in range(T)], "d_model": d, "n_heads": H,
            "n_kv_heads": KV, "causal": bool(causal)}
    inline, named = dict(head), dict(head)
    for name, a in arrays.items():
        a = a.astype("<f4")
        a.tofile(os.path.join(folder, name + ".f32"))
        np.save(os.path.join(folder, name + ".npy"), a)
        named[name] = name + ".npy"
        inline[name] = "@" + name  # placeholder, replaced by the numbers below
    with open(os.path.join(folder, "input_npy.json"), "w") as f:
        json.dump(named, f)
    if not with_json:
        return
    text = json.dumps(inline)
    for name, a in arrays.items():
        a = a.astype(np.float32)
        rows = a.reshape(-1, a.shape[-1]) if a.ndim == 2 else a.reshape(1, -1)
        body = "],[".join(",".join("%.9g" % v for v in row) for row in rows.tolist())
        text = text.replace(f'"@{name}"', f"[[{body}]]" if a.ndim == 2 else f"[{body}]")
    with open(os.path.join(folder, "input.json"), "w") as f:
        f.write(text)


def run_number(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return out.split()


def numpy_env():
    # numpy's BLAS gets its own defaults: these two tuning variables, when the
    # environment sets them, are dropped for the numpy command only.
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    return env


def flops(T, d, H, KV, causal, passes):
    """Multiply-adds counted as 2 FLOPs: 4 projections, scores and mixing of the visible cells;
    the wide head (passes 2) adds its scores, its mixing and its output projection."""
    hd = d // H
    kv = KV * hd
    visible = T * (T + 1) // 2 if causal else T * T
    heads = 2 * T * d * (2 * d + 2 * kv) + 4 * H * visible * hd
    return heads + (4 * visible * d + 2 * T * d * d if passes == 2 else 0)


def machine_peak(forward):
    """cores x clock x FLOPs per cycle per core (see bench/README.md)."""
    cores = os.cpu_count() or 1
    mhz, flags = 0.0, ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz") and not mhz:
                mhz = float(line.split(":")[1])
            elif line.startswith("flags") and not flags:
                flags = line
    # the clock as it runs (often above the nominal one in /proc/cpuinfo)
    measured = float(run_number([forward, "--clock"])[0])
    ghz, how = (measured, "measured") if measured > 0 else (mhz / 1e3, "nominal, /proc/cpuinfo")
    words = set(flags.split())
    # two vector FMA pipes per core (or two multiply and two add pipes, as on
    # AMD Zen): 2 x 2 FLOPs x lanes per cycle
    per_cycle = 64 if "avx512f" in words else 32 if "avx2" in words else 16
    return cores * ghz * per_cycle, f"{cores} cores x {ghz:.2f} GHz ({how}) x {per_cycle} FLOP/cycle"


def folder_mb(folder):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs) / 1e6


def run_cli(mhaviz, input_path, out_dir, runs):
    """Median wall time (ms), largest peak memory (MB), median phase times and output size (MB) of the CLI.

    The peak memory is the one mhaviz --timing prints (Linux's VmHWM: this
    program only). The child's ru_maxrss from wait4 would also count this
    Python process, which the child was forked from: 100 MB and more here."""
    walls, peak, phases = [], 0.0, {}
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([mhaviz, "-q", "--timing", "-o", out_dir, input_path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        if p.returncode != 0:
            raise RuntimeError(f"mhaviz failed ({p.returncode}) on {input_path}: {p.stderr.strip()}")
        peak = max(peak, float(re.search(r"^peak memory: ([0-9.]+) MB$", p.stderr, re.M).group(1)))
        for name, ms in re.findall(r"^(\w+): ([0-9.]+) ms$", p.stderr, re.M):
            phases.setdefault(name, []).append(float(ms))
    return statistics.median(walls), peak, {k: statistics.median(v) for k, v in phases.items()}, folder_mb(out_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mhaviz", default="./mhaviz")
    ap.add_argument("--forward", default="build/bench_forward")
    ap.add_argument("--work", default=None, help="folder for the generated inputs (default: build/bench)")
    ap.add_argument("--quick", action="store_true", help="one round, fewer runs (a smoke test)")
    ap.add_argument("--realtime", action="store_true",
                    help="time the forward passes (numpy's and mhaviz's) at real-time priority "
                         "(chrt -f 10, needs root): on a shared machine, as if the cores were free")
    args = ap.parse_args()
    work = args.work or os.path.join(HERE, "..", "build", "bench")
    py = sys.executable
    npf = os.path.join(HERE, "numpy_forward.py")
    peak, peak_how = machine_peak(args.forward)
    rt = ["chrt", "-f", "10"] if args.realtime else []

    load_before = os.getloadavg()
    fwd_rows, cli_rows, blas = [], [], "?"
    fwd, cli = {}, {}  # by shape name; by (shape name, numbers from)
    for n, (name, T, d, H, KV, causal, runs, rounds, cli_runs, passes, with_json) in enumerate(SHAPES):
        if args.quick:
            runs, rounds, cli_runs = 1 if T >= 1024 else 3, 1, 1
        folder = os.path.join(work, f"shape{n}")
        print(f"bench: {name}: writing inputs ...", file=sys.stderr)
        write_inputs(folder, T, d, H, KV, causal, n, with_json)
        shape = [str(v) for v in (T, d, H, KV, causal)]
        np_ms, one_ms, two_ms, ratios = [], [], [], []
        for r in range(rounds):
            print(f"bench: {name}: forward pass, round {r + 1} of {rounds} ...", file=sys.stderr)
            np_ms.append(float(run_number([*rt, py, npf, "time", folder, *shape, str(runs), str(passes)],
                                          numpy_env())[0]))
            one_ms.append(float(run_number([*rt, args.forward, folder, *shape, "1", str(runs), str(passes)])[0]))
            two_ms.append(float(run_number([*rt, args.forward, folder, *shape, "2", str(runs), str(passes)])[0]))
            ratios.append(two_ms[-1] / np_ms[-1])
        err_att, err_out, out_max, blas = run_number([py, npf, "check", folder, *shape])
        gflops = flops(T, d, H, KV, causal, passes) / (statistics.median(two_ms) * 1e6)
        fwd[name] = (name, T, d, H, passes, statistics.median(np_ms), statistics.median(one_ms),
                     statistics.median(two_ms), statistics.median(ratios),
                     statistics.median(o / t for o, t in zip(one_ms, two_ms)),
                     gflops, 100 * gflops / peak, float(err_att))
        fwd_rows.append(fwd[name])
        if os.access(args.mhaviz, os.X_OK):
            for fmt, file in (("JSON", "input.json"), (".npy", "input_npy.json")):
                if (fmt == ".npy" and T < 64) or (fmt == "JSON" and not with_json):
                    continue
                print(f"bench: {name}: CLI end to end ({fmt}) ...", file=sys.stderr)
                size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                           if f == file or (fmt == ".npy" and f.endswith(".npy")))
                wall, rss, ph, out_mb = run_cli(args.mhaviz, os.path.join(folder, file),
                                                os.path.join(folder, "out"), cli_runs)
                cli[name, fmt] = (name, fmt, size / 1e6, wall, rss, ph, out_mb)
                cli_rows.append(cli[name, fmt])

    load_after = os.getloadavg()
    print(f"\nLoad average (1, 5, 15 min) {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f} "
          f"before, {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} after, on {os.cpu_count()} cores: "
          f"a load before the run near or above the core count means other work shared the cores "
          f"(the 2-thread numbers suffer most).")
    omp = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("OMP_", "GOMP_")))
    print(f"OpenMP environment: {omp or 'none set (libgomp defaults)'}")
    if args.realtime:
        print("Forward passes (numpy and mhaviz) timed at real-time priority (chrt -f 10); the CLI at normal priority.")
    print(f"\nForward pass, medians (passes 1: the heads, mha_forward; 2: the heads and the wide head, "
          f"mha_forward_wide, as the CLI runs them); numpy {np.__version__} float32 "
          f"with {blas}; peak estimate {peak:.0f} GFLOP/s = {peak_how}\n")
    print("| input | T | d_model | heads | passes | numpy (ms) | mhaviz 1 thread (ms) | mhaviz 2 threads (ms) "
          "| mhaviz / numpy | 1 -> 2 threads | GFLOP/s (2 threads) | % of peak | max abs err of weights vs float64 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in fwd_rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.2f} | {r[6]:.2f} | {r[7]:.2f} | {r[8]:.3f} "
              f"| {r[9]:.2f}x | {r[10]:.1f} | {r[11]:.0f}% | {r[12]:.1e} |")
    if not cli_rows:
        print(f"\n(no CLI at {args.mhaviz}: end-to-end rows and targets skipped)")
        return
    names = ["load", "forward", "render", "write"]
    print("\nCLI end to end (mhaviz -q --timing; both forward passes, PNGs, reports), medians\n")
    print("| input | numbers from | input size (MB) | end to end (ms) | peak memory (MB) | output folder (MB) | "
          + " | ".join(f"{p} (ms)" for p in names) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(names))
    for name, fmt, size, wall, rss, ph, out_mb in cli_rows:
        cells = " | ".join(f"{ph[p]:.1f}" if p in ph else "-" for p in names)
        print(f"| {name} | {fmt} | {size:.1f} | {wall:.1f} | {rss:.0f} | {out_mb:.1f} | {cells} |")

    # The targets: (what, measured, limit, unit); met when measured <= limit,
    # except the thread speed-up, which must reach its limit.
    gpt, llama = "GPT-2 small, T=512", "Llama-3-8B layer, T=1024"
    targets = [
        ("class size end to end", cli["class size", "JSON"][3], 100, "ms"),
        ("T=512 forward, mhaviz / numpy", fwd[gpt][8], 1.0, ""),
        ("T=512 forward, 1 -> 2 threads", fwd[gpt][9], 1.6, "x (at least)"),
        ("GPT-2 T=64 from JSON, end to end", cli["GPT-2 small, T=64", "JSON"][3] / 1e3, 1.5, "s"),
        ("GPT-2 T=64 from JSON, peak memory", cli["GPT-2 small, T=64", "JSON"][4], 300, "MB"),
        ("GPT-2 T=64 from .npy, end to end", cli["GPT-2 small, T=64", ".npy"][3] / 1e3, 0.3, "s"),
        ("the pictures at T=512 (render; 17 now, the issue counted 15)", cli[gpt, ".npy"][5]["render"] / 1e3, 0.5, "s"),
        ("Llama layer forward (both passes), mhaviz / numpy", fwd[llama][8], 1.0, ""),
        ("Llama layer from .npy, end to end", cli[llama, ".npy"][3] / 1e3, 4.0, "s"),
        ("Llama layer from .npy, peak memory", cli[llama, ".npy"][4], 1000, "MB"),
        ("Llama layer from .npy, output folder", cli[llama, ".npy"][6], 250, "MB"),
    ]
    print("\nTargets (issue 12)\n")
    print("| target | measured | limit | met |")
    print("|---|---|---|---|")
    for what, got, limit, unit in targets:
        met = got >= limit if unit.startswith("x") else got <= limit
        print(f"| {what} | {got:.3g} | {limit:g} {unit} | {'yes' if met else '**no**'} |")


if __name__ == "__main__":
    main()
