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
  (e) each phase's share of the CLI's time; the forward phase against
      bench_forward's two passes (the kernels alone: warm, and the first run
      of a fresh process) at each shape; the
      load phase against `cat` reading the same files from the page cache;
      the class-size run against a numpy + matplotlib script drawing the same
      kind of pictures (matplotlib_class.py);
and checks the targets of issue 23 (and those of issue 12 still standing). Then
(issue 29) real models' shapes, random weights (make_bench_models.py: GPT-2 small,
F32, 40 tokens, layer 5; Llama-3.2-1B's shape, BF16, 64 tokens, its last layer):
mhaviz MODEL_DIR --text ... --layer N end to end and its peak memory, against
model_peer.py (torch + matplotlib: the same safetensors, the same forward pass,
each head drawn) in the same run, and issue 29's targets; (issue 31) the same two
checkpoints' every layer (no --layer), against the peer drawing every head of every
layer (GPT-2), and issue 31's targets. It prints markdown tables
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


# The CLI's phases, as mhaviz --timing prints them, in their order.
PHASES = ["load", "forward", "chance", "render", "write"]

# Issues 29 and 31: shape number, name, make_bench_models.py's folder, mhaviz runs,
# peer runs (0: none), every layer (issue 31: no --layer) or bench.json's layer
MODEL_SHAPES = [
    (4, "GPT-2 small (F32), 40 tokens, layer 5", "gpt2_small", 5, 3, False),
    (5, "Llama-3.2-1B shape (BF16), 64 tokens, layer 15", "llama32_1b", 3, 1, False),
    (6, "GPT-2 small (F32), 40 tokens, all 12 layers", "gpt2_small", 3, 3, True),
    (7, "Llama-3.2-1B shape (BF16), 64 tokens, all 16 layers", "llama32_1b", 3, 0, True),
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


def cat_ms(files, runs):
    """Median wall time (ms) of `cat` reading files into /dev/null, from the page cache (a first run warms it)."""
    ms = []
    for r in range(runs + 1):
        t0 = time.perf_counter()
        subprocess.run(["cat", *files], check=True, stdout=subprocess.DEVNULL)
        if r:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def matplotlib_ms(py, input_json, out_dir, runs):
    """Median wall time (ms) of matplotlib_class.py end to end; None when matplotlib is missing."""
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([py, os.path.join(HERE, "matplotlib_class.py"), input_json, out_dir],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"bench: matplotlib_class.py failed: {p.stderr.strip()[-300:]}", file=sys.stderr)
            return None
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def timed_runs(cmd, runs):
    """Runs cmd, which prints "NAME: X ms" phase lines and "peak memory: X MB" on
    stderr, runs times: (median wall time (ms), largest peak memory (MB), median
    phase times), or its error message when it fails."""
    walls, peak, phases = [], 0.0, {}
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        if p.returncode != 0:
            return f"{os.path.basename(cmd[1] if cmd[0] == sys.executable else cmd[0])} failed " \
                   f"({p.returncode}): {p.stderr.strip()[-300:]}"
        peak = max(peak, float(re.search(r"^peak memory: ([0-9.]+) MB$", p.stderr, re.M).group(1)))
        for name, ms in re.findall(r"^(\w+): ([0-9.]+) ms$", p.stderr, re.M):
            phases.setdefault(name, []).append(float(ms))
    return statistics.median(walls), peak, {k: statistics.median(v) for k, v in phases.items()}


def run_model_cli(mhaviz, folder, out_dir, runs, every):
    """mhaviz on a model folder (bench.json's text and layer; every: every layer, no
    --layer), as timed_runs, and the output folder's size (MB); checks that it saw
    bench.json's ids."""
    with open(os.path.join(folder, "bench.json")) as f:
        b = json.load(f)
    layer = [] if every else ["--layer", str(b["layer"])]
    got = timed_runs([mhaviz, "-q", "--timing", "--text", b["text"], *layer, "-o", out_dir, folder], runs)
    if isinstance(got, str):
        raise RuntimeError(got)
    report = os.path.join(out_dir, "layer_00" if every else "", "report.json")
    with open(report) as f:
        seen = json.load(f)["token_ids"]
    if seen != b["ids"]:
        raise RuntimeError(f"mhaviz saw the ids {seen}, the peer is given {b['ids']}")
    return (*got, folder_mb(out_dir))


def run_model_peer(py, folder, out_dir, runs, every):
    """model_peer.py on the same folder, ids and layer (every: every layer), as
    timed_runs; None when it cannot run (no matplotlib)."""
    with open(os.path.join(folder, "bench.json")) as f:
        b = json.load(f)
    got = timed_runs([py, os.path.join(HERE, "model_peer.py"), folder, out_dir,
                      "--layer", "all" if every else str(b["layer"]),
                      "--ids", ",".join(map(str, b["ids"]))], runs)
    if isinstance(got, str):
        print(f"bench: {got}", file=sys.stderr)
        return None
    return got


def model_rows(mhaviz, py, work, wanted, quick):
    """Issues 29 and 31's rows: {number: (name, mhaviz (ms, MB, phases, output MB),
    peer (ms, MB, phases) or None)}."""
    models = os.path.join(work, "models")
    needed = sorted({folder for n, _, folder, *_ in MODEL_SHAPES if wanted(n)})
    print(f"bench: writing the checkpoints {', '.join(needed)} (kept between runs) ...", file=sys.stderr)
    subprocess.run([py, os.path.join(HERE, "make_bench_models.py"), models, *needed], check=True)
    rows = {}
    for n, name, folder, runs, peer_runs, every in MODEL_SHAPES:
        if not wanted(n):
            continue
        if quick:
            runs, peer_runs = 1, min(peer_runs, 1)
        folder = os.path.join(models, folder)
        print(f"bench: {name}: mhaviz ...", file=sys.stderr)
        got = run_model_cli(mhaviz, folder, os.path.join(work, f"model{n}_out"), runs, every)
        peer = None
        if peer_runs:
            print(f"bench: {name}: the torch + matplotlib peer ...", file=sys.stderr)
            peer = run_model_peer(py, folder, os.path.join(work, f"model{n}_peer"), peer_runs, every)
        rows[n] = (name, got, peer)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mhaviz", default="./mhaviz")
    ap.add_argument("--forward", default="build/bench_forward")
    ap.add_argument("--work", default=None, help="folder for the generated inputs (default: build/bench)")
    ap.add_argument("--quick", action="store_true", help="one round, fewer runs (a smoke test)")
    ap.add_argument("--shapes", default=None,
                    help="comma-separated shape numbers to run (0 class size, 1 and 2 GPT-2 small at T = 64 "
                         "and 512, 3 the Llama layer, 4 and 5 the GPT-2 and Llama-3.2-1B checkpoints, "
                         "6 and 7 the same checkpoints' every layer); "
                         "default all: targets of shapes not run are left out")
    ap.add_argument("--realtime", action="store_true",
                    help="time the forward passes (numpy's and mhaviz's) at real-time priority "
                         "(chrt -f 10, needs root): on a shared machine, as if the cores were free")
    args = ap.parse_args()
    work = args.work or os.path.join(HERE, "..", "build", "bench")
    py = sys.executable
    npf = os.path.join(HERE, "numpy_forward.py")
    rt = ["chrt", "-f", "10"] if args.realtime else []

    load_before = os.getloadavg()
    fwd_rows, cli_rows, blas = [], [], "?"
    fwd, cli = {}, {}  # by shape name; by (shape name, numbers from)
    kernels, cat, mpl = {}, {}, None  # both passes' kernel time (ms) by shape; cat's time (ms) by shape
    first = {}  # both passes' first run in a fresh process (ms) by shape: fresh pages, BLIS and threads starting

    def wanted(n):
        return args.shapes is None or str(n) in args.shapes.split(",")

    # the clock (bench_forward --clock) only when a forward-pass shape runs: --shapes 4,5
    # (the models) need no bench_forward
    if any(wanted(n) for n in range(len(SHAPES))):
        peak, peak_how = machine_peak(args.forward)

    for n, (name, T, d, H, KV, causal, runs, rounds, cli_runs, passes, with_json) in enumerate(SHAPES):
        if not wanted(n):
            continue
        if args.quick:
            runs, rounds, cli_runs = 1 if T >= 1024 else 3, 1, 1
        folder = os.path.join(work, f"shape{n}")
        print(f"bench: {name}: writing inputs ...", file=sys.stderr)
        write_inputs(folder, T, d, H, KV, causal, n, with_json)
        shape = [str(v) for v in (T, d, H, KV, causal)]
        np_ms, one_ms, two_ms, ratios, both_ms, first_ms = [], [], [], [], [], []
        for r in range(rounds):
            print(f"bench: {name}: forward pass, round {r + 1} of {rounds} ...", file=sys.stderr)
            np_ms.append(float(run_number([*rt, py, npf, "time", folder, *shape, str(runs), str(passes)],
                                          numpy_env())[0]))
            one_ms.append(float(run_number([*rt, args.forward, folder, *shape, "1", str(runs), str(passes)])[0]))
            two = run_number([*rt, args.forward, folder, *shape, "2", str(runs), str(passes)])
            two_ms.append(float(two[0]))
            ratios.append(two_ms[-1] / np_ms[-1])
            # both passes, as the CLI's forward phase runs them (2 threads): its yardstick,
            # warm (the median) and the process's first run
            both = two if passes == 2 else run_number([*rt, args.forward, folder, *shape, "2", str(runs), "2"])
            both_ms.append(float(both[0]))
            first_ms.append(float(both[1]))
        kernels[name] = statistics.median(both_ms)
        first[name] = statistics.median(first_ms)
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
                if fmt == ".npy":
                    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                             if f == file or f.endswith(".npy")]
                    cat[name] = cat_ms(files, max(cli_runs, 5))
            if n == 0 and with_json:
                print(f"bench: {name}: the numpy + matplotlib script ...", file=sys.stderr)
                mpl = matplotlib_ms(py, os.path.join(folder, "input.json"), os.path.join(folder, "out_matplotlib"),
                                    1 if args.quick else 3)

    models = {}
    if os.access(args.mhaviz, os.X_OK) and any(wanted(n) for n, *_ in MODEL_SHAPES):
        usage = subprocess.run([args.mhaviz, "--help"], capture_output=True, text=True)
        if "--text" in usage.stdout + usage.stderr:
            models = model_rows(args.mhaviz, py, work, wanted, args.quick)
        else:
            print(f"bench: {args.mhaviz} reads no model folders (no --text): the models' rows are skipped",
                  file=sys.stderr)

    load_after = os.getloadavg()
    print(f"\nLoad average (1, 5, 15 min) {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f} "
          f"before, {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} after, on {os.cpu_count()} cores: "
          f"a load before the run near or above the core count means other work shared the cores "
          f"(the 2-thread numbers suffer most).")
    omp = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("OMP_", "GOMP_")))
    print(f"OpenMP environment: {omp or 'none set (libgomp defaults)'}")
    if args.realtime:
        print("Forward passes (numpy and mhaviz) timed at real-time priority (chrt -f 10); the CLI at normal priority.")
    if fwd_rows:  # (not when only the models ran: --shapes 4,5)
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
        if not os.access(args.mhaviz, os.X_OK):
            print(f"\n(no CLI at {args.mhaviz}: end-to-end rows and targets skipped)")
        print_models(models)
        return
    names = [p for p in PHASES if any(p in ph for *_, ph, _ in cli_rows)]  # "chance" since issue 23
    print("\nCLI end to end (mhaviz -q --timing; both forward passes, PNGs, reports), medians\n")
    print("| input | numbers from | input size (MB) | end to end (ms) | peak memory (MB) | output folder (MB) | "
          + " | ".join(f"{p} (ms)" for p in names) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(names))
    for name, fmt, size, wall, rss, ph, out_mb in cli_rows:
        cells = " | ".join(f"{ph[p]:.1f}" if p in ph else "-" for p in names)
        print(f"| {name} | {fmt} | {size:.1f} | {wall:.1f} | {rss:.0f} | {out_mb:.1f} | {cells} |")

    # Each phase's share of the end-to-end time; "other": starting the
    # process, parsing the options, freeing, exiting (wall minus the phases).
    print("\nEach phase's share of the end-to-end time (medians; other = start, exit and what no phase covers), "
          "and the forward phase against bench_forward's two passes on 2 threads (the kernels alone: warm "
          "buffers, and the first run of a fresh process), the load phase against `cat` reading the same files "
          "from the page cache\n")
    print("| input | numbers from | " + " | ".join(f"{p} %" for p in names) + " | other % | forward phase (ms) | "
          "both passes, bench_forward (ms) | phase / kernels | kernels' first run (ms) | phase / first run "
          "| load (ms) | cat (ms) | load / cat |")
    print("|---|---|" + "---|" * len(names) + "---|---|---|---|---|---|---|---|---|")
    for name, fmt, size, wall, rss, ph, out_mb in cli_rows:
        shares = " | ".join(f"{100 * ph.get(p, 0) / wall:.0f}" for p in names)
        other = 100 * (wall - sum(ph.get(p, 0) for p in names)) / wall
        c = cat.get(name) if fmt == ".npy" else None
        load_cat = f"{c:.1f} | {ph['load'] / c:.2f}" if c else "- | -"
        print(f"| {name} | {fmt} | {shares} | {other:.0f} | {ph['forward']:.1f} | {kernels[name]:.1f} "
              f"| {ph['forward'] / kernels[name]:.2f} | {first[name]:.1f} | {ph['forward'] / first[name]:.2f} "
              f"| {ph['load']:.1f} | {load_cat} |")
    if mpl:
        print(f"\nThe class-size input drawn by a numpy + matplotlib script (bench/matplotlib_class.py: "
              f"a heatmap per head and one for the wide head, the overview, sharpness and one query's pull; "
              f"no architecture diagram, no report): {mpl:.0f} ms, median of its runs, against mhaviz's "
              f"{cli['class size', 'JSON'][3]:.0f} ms: {mpl / cli['class size', 'JSON'][3]:.1f}x.")

    # The targets: (what, measured, limit, unit); met when measured <= limit,
    # except those marked "at least".
    gpt, llama = "GPT-2 small, T=512", "Llama-3-8B layer, T=1024"
    phase_rows = [(name, fmt, ph) for name, fmt, size, wall, rss, ph, out_mb in cli_rows
                  if fmt == ".npy" or (name, ".npy") not in cli]
    targets = [(f"{name}: forward phase / both passes' kernels (bench_forward)", ph["forward"] / kernels[name], 1.15, "")
               for name, fmt, ph in phase_rows]
    # each measured when its shapes ran (--shapes): a lambda, left out on KeyError
    wanted = [
        ("Llama layer: forward phase / numpy's two passes",
         lambda: cli[llama, ".npy"][5]["forward"] / fwd[llama][5], 1.0, ""),
        ("Llama layer from .npy, end to end", lambda: cli[llama, ".npy"][3] / 1e3, 3.0, "s"),
        ("Llama layer from .npy, peak memory", lambda: cli[llama, ".npy"][4], 1000, "MB"),
        ("Llama layer from .npy, output folder", lambda: cli[llama, ".npy"][6], 250, "MB"),
    ]
    wanted += [(f"{name}: .npy load / cat of the same files",
                lambda name=name: cli[name, ".npy"][5]["load"] / cat[name], 2.0, "") for name in cat]
    wanted.append(("class size end to end", lambda: cli["class size", "JSON"][3], 150, "ms"))
    wanted.append(("class size: numpy + matplotlib script / mhaviz",
                   lambda: mpl / cli["class size", "JSON"][3], 20, "x (at least)"))
    still = [
        ("T=512 forward (kernels), mhaviz / numpy", lambda: fwd[gpt][8], 1.0, ""),
        ("T=512 forward, 1 -> 2 threads", lambda: fwd[gpt][9], 1.6, "x (at least)"),
        ("GPT-2 T=64 from JSON, end to end", lambda: cli["GPT-2 small, T=64", "JSON"][3] / 1e3, 1.5, "s"),
        ("GPT-2 T=64 from JSON, peak memory", lambda: cli["GPT-2 small, T=64", "JSON"][4], 300, "MB"),
        ("GPT-2 T=64 from .npy, end to end", lambda: cli["GPT-2 small, T=64", ".npy"][3] / 1e3, 0.3, "s"),
        ("the pictures at T=512 (render phase)", lambda: cli[gpt, ".npy"][5]["render"] / 1e3, 0.5, "s"),
        ("Llama layer forward (kernels, both passes), mhaviz / numpy", lambda: fwd[llama][8], 1.0, ""),
    ]

    def measured(rows):
        out = []
        for what, get, limit, unit in rows:
            try:
                out.append((what, get(), limit, unit))
            except (KeyError, TypeError):  # its shape not run, or no matplotlib
                pass
        return out

    targets += measured(wanted)
    still = measured(still)
    if mpl is None and "class size" in kernels:
        print("\n(no matplotlib: the class-size comparison with a numpy + matplotlib script is skipped)")
    for title, rows in (("Targets (issue 23)", targets), ("Targets of issue 12 still standing", still)):
        if rows:  # none of its shapes ran (--shapes)
            print_targets(title, rows)
    print_models(models)


def print_targets(title, rows):
    """rows: (what, measured, limit, unit), met when measured <= limit, or >= for "at least"."""
    print(f"\n{title}\n")
    print("| target | measured | limit | met |")
    print("|---|---|---|---|")
    for what, got, limit, unit in rows:
        met = got >= limit if "at least" in unit else got <= limit
        shown = f"{got:.3f}" if got < 10 else f"{got:.0f}"  # a ratio of 1.003 must not read as 1
        print(f"| {what} | {shown} | {limit:g} {unit} | {'yes' if met else '**no**'} |")


def print_models(models):
    """Issues 29 and 31's table and targets, from model_rows."""
    if not models:
        return
    seen = {p for _, (_, _, ph, _), _ in models.values() for p in ph}
    names = [p for p in PHASES if p in seen] + sorted(seen - set(PHASES))
    peer_names = ["load", "forward", "draw"]
    print("\nReal models' shapes, random weights (make_bench_models.py): mhaviz MODEL_DIR --text ... --layer N "
          "(every layer: no --layer; -q --timing) against model_peer.py (the same safetensors mapped into torch, "
          "the same forward pass in float32 up to the layer, each head of the layer, or of every layer, drawn "
          "with matplotlib), end to end, medians\n")
    print("| model | mhaviz (ms) | peak memory (MB) | output folder (MB) | " + " | ".join(f"{p} (ms)" for p in names)
          + " | peer (ms) | " + " | ".join(f"peer {p} (ms)" for p in peer_names)
          + " | peer peak memory (MB) | peer / mhaviz |")
    print("|---|---|---|---|" + "---|" * len(names) + "---|" + "---|" * len(peer_names) + "---|---|")
    for name, (wall, rss, ph, out_mb), peer in models.values():
        cells = " | ".join(f"{ph[p]:.1f}" if p in ph else "-" for p in names)
        if peer:
            pw, prss, pph = peer
            pcells = " | ".join(f"{pph[p]:.0f}" if p in pph else "-" for p in peer_names)
            tail = f"{pw:.0f} | {pcells} | {prss:.0f} | {pw / wall:.1f}x"
        else:
            tail = "- | " + " | ".join("-" for _ in peer_names) + " | - | -"
        print(f"| {name} | {wall:.0f} | {rss:.0f} | {out_mb:.1f} | {cells} | {tail} |")
    # (shape, the peer / mhaviz at least, peak MB, end to end s, output folder MB): None where no target
    limits = {29: [(4, 8, 700, None, None), (5, None, 1500, 3, None)],
              31: [(6, 8, 800, None, None), (7, None, 1500, 20, 300)]}
    for issue, shapes in limits.items():
        rows = []
        for n, ratio, peak, seconds, folder in shapes:
            if n not in models:
                continue
            name, (wall, rss, _, out_mb), peer = models[n]
            if ratio and peer:
                rows.append((f"{name}: the peer / mhaviz", peer[0] / wall, ratio, "x (at least)"))
            if seconds:
                rows.append((f"{name}: end to end", wall / 1e3, seconds, "s"))
            rows.append((f"{name}: peak memory", rss, peak, "MB"))
            if folder:
                rows.append((f"{name}: output folder", out_mb, folder, "MB"))
        if rows:
            print_targets(f"Targets (issue {issue})", rows)


if __name__ == "__main__":
    main()
