#!/usr/bin/env python3
"""Where a plan's second thread has nothing to do: q8rt-run --profile-split on each model.

Every work item runs on one core, timed, while the steps split their work as for N threads, so the
figures do not depend on what the other cores are doing (a shared machine). Per model: the 1-thread
time, the serial part (steps, or parts of steps, outside parallel regions) and its fraction, the
Amdahl bound on N threads, and the bound that also counts the regions' granularity (items claimed in
order by whichever thread is free first). Then the biggest losses by op type: serial ms, and the ms
that the regions' granularity keeps above region/N.

usage: split_report.py Q8RT_RUN MODEL.onnx... [--threads N] [--repeat R] [--top K] [--json FILE]
The input is MODEL's folder's input.npy when it exists (else q8rt-run's generated data)."""
import argparse, collections, json, os, re, subprocess, sys


def run(q8rt_run, model, threads, repeat):
    cmd = [q8rt_run, model, "--threads", str(threads), "--repeat", str(repeat), "--profile-split"]
    inp = os.path.join(os.path.dirname(model), "input.npy")
    if os.path.exists(inp):
        cmd += ["--input", "%s=%s" % (input_name(model), inp)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    steps, cur = [], None
    for ln in out.splitlines():
        f = ln.split()
        if ln.startswith("profile ") and len(f) >= 5:
            cur = {"op": f[1], "name": f[2], "kernel": f[-2], "ms": float(f[-1]), "region_ms": 0.0, "ideal_ms": 0.0,
                   "regions": 0, "items": 0}
            steps.append(cur)
        elif ln.startswith("threads ") and cur is not None:
            kv = dict(x.split("=", 1) for x in f if "=" in x)
            cur["regions"], cur["items"] = int(kv["regions"]), int(kv["items"])
            cur["region_ms"] = min(float(kv["region_ms"]), cur["ms"])
            cur["ideal_ms"] = min(float(kv["ideal_ms"]), cur["ms"])
    return steps


def input_name(model):
    try:
        import onnx
        g = onnx.load(model, load_external_data=False).graph
        init = {i.name for i in g.initializer}
        return [i.name for i in g.input if i.name not in init][0]
    except Exception:
        return "x"


def summarize(steps, threads):
    total = sum(s["ms"] for s in steps)
    region = sum(s["region_ms"] for s in steps)
    ideal = sum(s["ideal_ms"] for s in steps)
    serial = total - region
    by_serial, by_grain = collections.Counter(), collections.Counter()
    for s in steps:
        by_serial[s["op"] + ("" if s["regions"] else " (no split)")] += s["ms"] - s["region_ms"]
        by_grain[s["op"]] += s["ideal_ms"] - s["region_ms"] / threads
    return {"total_ms": total, "serial_ms": serial, "serial_fraction": serial / total if total else 0.0,
            "amdahl": total / (serial + region / threads) if total else 1.0,
            "granular": total / (serial + ideal) if total else 1.0,
            "serial_by_op": by_serial.most_common(), "grain_loss_by_op": by_grain.most_common()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("q8rt_run")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json")
    a = ap.parse_args()
    res = {}
    print("%-32s %8s %9s %7s %8s %9s" % ("model", "1T ms", "serial ms", "serial", "amdahl", "granular"))
    for m in a.models:
        r = summarize(run(a.q8rt_run, m, a.threads, a.repeat), a.threads)
        key = os.path.basename(os.path.dirname(m)) + "-" + os.path.basename(m)[:-5]
        res[key] = r
        print("%-32s %8.2f %9.3f %7.3f %7.2fx %8.2fx" % (key, r["total_ms"], r["serial_ms"], r["serial_fraction"],
                                                     r["amdahl"], r["granular"]))
        if a.top:
            print("    serial: " + ", ".join("%s %.3f" % (k, v) for k, v in r["serial_by_op"][:a.top] if v > 0.0005))
            print("    grain:  " + ", ".join("%s %.3f" % (k, v) for k, v in r["grain_loss_by_op"][:a.top] if v > 0.0005))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
