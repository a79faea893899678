#!/usr/bin/env python3
"""LLNL LEAP's SIRT beside ours (bench-sirt), on the same problem, on the GPU host.

  python3 tests/bench/sirt_leap.py [--peers DIR] [--ours FILE] [--size N] [--views V]
                                   [--iterations K] [--reps R] [--json FILE] [--cpu-dry-run]

--peers: the folder of the peers kit (leap/ inside; default .gpu/peers, then ../shared/peers).
--ours: bench-sirt's stdout saved in FILE; its figures are put beside LEAP's.
Prints ONE JSON object on stdout; a short table on stderr (LEAP's own output goes to stderr).

Problem (bench-sirt.c, the seed's geometry): N^3 voxels of 1 mm, V views over 360 deg of
N^2 cells of 2 mm (pitch at the detector), sod 4N mm, sdd 8N mm (N = 256: 1024, 2048, as
leap_bench.py's case A). LEAP phi = our beta + 180 deg (leap_bench.py explains); LEAP's
field-of-view mask widened to the whole cube, like ours. LEAP's SIRT (leapctype.SIRT = SART
with one subset): relaxation 0.9, non-negativity on, P1 and P^T 1 computed at each call;
bench-sirt uses relaxation 0.9 and non-negativity too. Data: LEAP's projection of a uniform
ellipsoid (the cost of an iteration does not depend on the data), torch CUDA tensors.

Timing: LEAP's SIRT with 1 iteration (T1) and with 1 + K iterations (T1+K), each bracketed
by torch.cuda.synchronize(), wall clock, median of R runs: one iteration = (T1+K - T1) / K,
set-up = T1 - one iteration. Ours: CUDA events (bench-sirt), the mean of K iterations after a
warm-up, set-up apart. Both do the same work an iteration: a projection and a
backprojection of all views plus elementwise steps.
"""
import argparse, json, os, re, statistics, sys, time, traceback, types

HERE = os.path.dirname(os.path.abspath(__file__))
_json_fd = os.dup(1)              # the JSON object goes here ...
os.dup2(2, 1)                     # ... everything else (LEAP's printf too) to stderr
sys.stdout = sys.stderr

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--peers", default=None)
ap.add_argument("--ours", help="bench-sirt output to put beside LEAP's figures")
ap.add_argument("--size", type=int, default=256)
ap.add_argument("--views", type=int, default=256)
ap.add_argument("--iterations", type=int, default=5)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--json", help="also write the JSON object to this file")
ap.add_argument("--cpu-dry-run", action="store_true",
                help="LEAP's CPU path on 24^3, 12 views: catches Python errors without a GPU")
A = ap.parse_args()
DRY = A.cpu_dry_run
N, V, K = (24, 12, 2) if DRY else (A.size, A.views, A.iterations)
res = {"tool": "LLNL LEAP SIRT (leapctype.SIRT)", "size": N, "views": V, "iterations": K,
       "argv": sys.argv[1:], "failed_steps": [],
       "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def emit():
    text = json.dumps(res)
    if A.json:
        with open(A.json, "w") as fh:
            fh.write(text + "\n")
    os.write(_json_fd, (text + "\n").encode())


def fail(where, e):
    res["failed_steps"].append({"step": where, "error": "%s: %s" % (type(e).__name__, e),
                                "trace": traceback.format_exc()[-600:]})
    print("sirt_leap: FAILED %s: %s: %s" % (where, type(e).__name__, e), file=sys.stderr)


step = "import"
try:
    cands = [A.peers] if A.peers else [os.path.join(HERE, "..", "..", ".gpu", "peers"),
                                       os.path.join(HERE, "..", "..", "..", "shared", "peers")]
    leapdir = next((os.path.join(p, "leap") for p in cands
                    if p and os.path.exists(os.path.join(p, "leap", "leapctype.py"))), None)
    if leapdir is None:
        raise FileNotFoundError("no leap/leapctype.py under %s (use --peers)" % ", ".join(map(str, cands)))
    res["leap_dir"] = os.path.abspath(leapdir)
    sys.path.insert(0, leapdir)
    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None and not DRY:
        raise RuntimeError("torch is needed for the GPU runs")
    for mod in ("readline", "imageio"):    # leapctype imports both; neither is used here
        try:
            __import__(mod)
        except ImportError:
            sys.modules[mod] = types.ModuleType(mod)
    from leapctype import tomographicModels
    if not DRY:
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device visible to torch")
        res["device"] = torch.cuda.get_device_name(0)

    step = "geometry"
    ct = tomographicModels()
    if ct.libprojectors is None:
        raise RuntimeError("libleapct.so not loaded from %s" % leapdir)
    ct.set_log_error()
    ct.print_warnings = False
    pitch, vox, sod, sdd = 2.0, 1.0, 4.0 * N, 8.0 * N
    phis = (180.0 + 360.0 * np.arange(V) / V).astype(np.float32)
    assert ct.set_conebeam(V, N, N, pitch, pitch, 0.5 * (N - 1), 0.5 * (N - 1), phis, sod, sdd)
    ct.set_flatDetector()
    assert ct.set_volume(N, N, N, vox, vox, 0.0, 0.0, 0.0)
    assert ct.set_projector("SF")
    ct.set_diameterFOV(1.0e7)
    if DRY:
        assert ct.set_gpu(-1)
    else:
        assert ct.set_gpus([0])
    res["leap_version"] = ct.version()

    step = "data"
    use_torch = torch is not None and not DRY
    c = (np.arange(N) - 0.5 * (N - 1)) * vox
    z, y, x = np.meshgrid(c, c, c, indexing="ij")
    ell = ((x / (0.4 * N)) ** 2 + (y / (0.45 * N)) ** 2 + (z / (0.45 * N)) ** 2 <= 1).astype(np.float32)
    if use_torch:
        dev = torch.device("cuda:0")
        f_true = torch.from_numpy(ell).to(dev)
        g = torch.zeros((V, N, N), dtype=torch.float32, device=dev)
    else:
        f_true, g = ell, np.zeros((V, N, N), np.float32)
    ct.project(g, f_true)

    def sync():
        if use_torch:
            torch.cuda.synchronize()

    def run(iters):
        f = torch.zeros((N, N, N), dtype=torch.float32, device=dev) if use_torch \
            else np.zeros((N, N, N), np.float32)
        sync()
        t0 = time.perf_counter()
        ct.SIRT(g, f, iters)
        sync()
        return (time.perf_counter() - t0) * 1e3, f

    step = "SIRT timing"
    run(1)                                             # warm-up
    t1 = [run(1)[0] for _ in range(A.reps)]
    tk = [run(1 + K)[0] for _ in range(A.reps)]
    m1, mk = statistics.median(t1), statistics.median(tk)
    it = (mk - m1) / K
    res["leap"] = {"sirt_1_ms": t1, "sirt_1_plus_k_ms": tk, "iteration_ms": it,
                   "setup_ms": m1 - it, "relaxation": 0.9, "nonnegative": True}
    _, f = run(K)
    ff = f.double().cpu().numpy() if use_torch else f.astype(np.float64)
    res["leap"]["nrmse_vs_ellipsoid_after_k"] = float(np.linalg.norm(ff - ell) / np.linalg.norm(ell))
except Exception as e:
    fail(step, e)

ours = None
if A.ours:
    try:
        for line in open(A.ours):
            m = re.match(r"\|\s*(\d+)\^3\s*\|\s*(\d+)\s*x\s*(\d+)\^2\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|", line)
            if m and (int(m[1]), int(m[2]), int(m[3])) == (N, V, N):
                ours = {"setup_ms": float(m[4]), "iteration_ms": float(m[5])}
            if line.startswith("SIRT ("):
                res["ours_header"] = line.strip()
        res["ours"] = ours
        if ours is None:
            print("sirt_leap: no bench-sirt row for %d^3, %d x %d^2 in %s" % (N, V, N, A.ours),
                  file=sys.stderr)
    except Exception as e:
        fail("--ours %s" % A.ours, e)

if "leap" in res:
    L = res["leap"]
    print("\nSIRT, %d^3, %d views of %d^2, on %s (LEAP: wall, median of %d; ours: CUDA events)"
          % (N, V, N, res.get("device", "cpu"), A.reps), file=sys.stderr)
    print("%-8s %14s %10s" % ("", "iteration ms", "setup ms"), file=sys.stderr)
    print("%-8s %14.2f %10.2f" % ("LEAP", L["iteration_ms"], L["setup_ms"]), file=sys.stderr)
    if ours:
        print("%-8s %14.2f %10.2f" % ("ours", ours["iteration_ms"], ours["setup_ms"]), file=sys.stderr)
        print("LEAP/ours per iteration: %.2f" % (L["iteration_ms"] / ours["iteration_ms"]),
              file=sys.stderr)
if res["failed_steps"]:
    print("failed steps: %s" % "; ".join(f["step"] for f in res["failed_steps"]), file=sys.stderr)
emit()
sys.exit(1 if res["failed_steps"] else 0)
