#!/usr/bin/env python3
"""GPU check: proves, on a machine with an NVIDIA GPU, that trainyard-agent
reports the GPUs as nvidia-smi does and that a run gets exactly the GPUs it
was given.

Drives `trainyard-agent --stdio` directly (no sshd, no Qt): the agent protocol
is JSON lines with raw payloads (app/agent/PROTOCOL.md). Standard library only.

  tests/gpu/gpu_check.py --agent build/release/app/agent/trainyard-agent \
      --gpucheck build/release/app/gpucheck/trainyard-gpucheck [--python /usr/bin/python3] \
      [--report FILE]

Checks (each prints PASS/FAIL/SKIP with the figures; exit status 1 if any FAIL):
 1. `gpus`: count, index, UUID, name, PCI bus id, memory total equal nvidia-smi's;
    memory used / utilisation within tolerance of nvidia-smi read just after.
 2. trainyard-gpucheck started through the agent on the last GPU sees exactly one
    device whose UUID is the one the agent reported for that index
    (CUDA_DEVICE_ORDER=PCI_BUS_ID + CUDA_VISIBLE_DEVICES).
 3. while it runs: the agent reports that GPU busy (utilisation >= 50 %), its
    process with >= the allocated memory and tagged with the run; nvidia-smi's
    compute-apps agree on the pid and memory.
 4. a second Trainyard instance (other `client`) is refused the same GPU.
 5. a short CUDA PyTorch run (if torch with CUDA imports) through the agent on
    GPU 0: its console names the same device and finishes with exit code 0.
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

RESULTS = []


def record(name, ok, detail):
    status = {True: "PASS", False: "FAIL", None: "SKIP"}[ok]
    RESULTS.append((name, status, detail))
    print(f"{status}  {name}: {detail}", flush=True)


class Agent:
    """A client of trainyard-agent over its stdin/stdout."""

    def __init__(self, binary, state_dir):
        env = dict(os.environ)
        self.proc = subprocess.Popen([binary, "--stdio", "--state-dir", state_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 1
        self.replies = {}
        self.consoles = {}
        self.exited = {}
        self.cv = threading.Condition()
        self.hello = None
        threading.Thread(target=self._reader, daemon=True).start()
        with self.cv:
            self.cv.wait_for(lambda: self.hello is not None, timeout=10)
        if self.hello is None:
            raise RuntimeError("agent sent no hello within 10 s")

    def _reader(self):
        out = self.proc.stdout
        while True:
            line = out.readline()
            if not line:
                with self.cv:
                    self.cv.notify_all()
                return
            msg = json.loads(line)
            payload = out.read(msg["len"]) if "len" in msg else b""
            with self.cv:
                t = msg.get("type")
                if t == "hello":
                    self.hello = msg
                elif t == "reply":
                    self.replies[msg["id"]] = msg
                elif t == "output":
                    self.consoles.setdefault(msg["run"], bytearray()).extend(payload)
                elif t == "exited":
                    self.exited[msg["run"]] = msg
                self.cv.notify_all()

    def request(self, op, timeout=60, **fields):
        with self.cv:
            rid = self.next_id
            self.next_id += 1
        msg = dict(fields, id=rid, op=op)
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        with self.cv:
            if not self.cv.wait_for(lambda: rid in self.replies, timeout=timeout):
                raise RuntimeError(f"no reply to {op} within {timeout} s")
            return self.replies.pop(rid)

    def wait_exit(self, run, timeout):
        with self.cv:
            self.cv.wait_for(lambda: run in self.exited, timeout=timeout)
            return self.exited.get(run)

    def console(self, run):
        with self.cv:
            return bytes(self.consoles.get(run, b""))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def nvidia_smi(query, kind="gpu"):
    flag = "--query-gpu=" if kind == "gpu" else "--query-compute-apps="
    out = subprocess.run(["nvidia-smi", flag + query, "--format=csv,noheader,nounits"],
                         check=True, capture_output=True, text=True).stdout
    return [[c.strip() for c in row] for row in csv.reader(io.StringIO(out)) if row]


def check_inventory(agent):
    reply = agent.request("gpus")
    gpus = reply.get("gpus", [])
    smi = nvidia_smi("index,uuid,name,pci.bus_id,memory.total,memory.used,utilization.gpu")
    record("gpus source", reply.get("source") in ("nvml", "nvidia-smi"),
           f"source={reply.get('source')} warning={reply.get('warning')}")
    record("gpu count", len(gpus) == len(smi), f"agent {len(gpus)}, nvidia-smi {len(smi)}")
    for g, row in zip(gpus, smi):
        idx, uuid, name, bus, total, used, util = row
        same = (str(g["index"]) == idx and g["uuid"] == uuid and g["name"] == name
                and g["pci_bus_id"].lower() == bus.lower() and int(g["memory_total_mib"]) == int(total))
        record(f"gpu {idx} identity", same,
               f"agent {g['uuid']} {g['name']} {g['pci_bus_id']} {g['memory_total_mib']} MiB; "
               f"nvidia-smi {uuid} {name} {bus} {total} MiB")
        record(f"gpu {idx} memory used", abs(int(g["memory_used_mib"]) - int(used)) <= 64,
               f"agent {g['memory_used_mib']} MiB, nvidia-smi {used} MiB (tolerance 64)")
    return gpus


def check_gpucheck(agent, gpus, gpucheck, workdir):
    target = gpus[-1]
    run = f"gpucheck-{int(time.time())}"
    mem = 1024
    r = agent.request("start", run=run, argv=[gpucheck, "--seconds", "20", "--mem-mib", str(mem)],
                      workdir=workdir, env={}, gpus=[target["index"]], client="gpu-check-a")
    if not r["ok"]:
        record("gpucheck start", False, r.get("error"))
        return None
    agent.request("tail", run=run, offset=0, follow=True)
    time.sleep(8)  # the kernels run; NVML's utilisation window is ~1 s
    reply = agent.request("gpus")
    g = next(x for x in reply["gpus"] if x["index"] == target["index"])
    procs = g.get("processes") or []
    mine = [p for p in procs if p.get("run") == run]
    record("busy gpu utilisation", (g.get("utilization_pct") or 0) >= 50,
           f"GPU {target['index']} at {g.get('utilization_pct')} %")
    record("busy gpu process tagged with run", len(mine) == 1 and mine[0]["used_memory_mib"] >= mem,
           f"processes {procs}")
    apps = nvidia_smi("pid,gpu_uuid,used_memory", kind="apps")
    smi_pids = {int(a[0]): (a[1], int(a[2])) for a in apps}
    if mine:
        pid = mine[0]["pid"]
        got = smi_pids.get(pid)
        record("nvidia-smi agrees on process", got is not None and got[0] == target["uuid"]
               and abs(got[1] - mine[0]["used_memory_mib"]) <= 16,
               f"pid {pid}: nvidia-smi {got}, agent {mine[0]['used_memory_mib']} MiB")
    # another Trainyard instance must be refused this GPU
    r2 = agent.request("start", run=run + "-other", argv=["true"], workdir=workdir, env={},
                       gpus=[target["index"]], client="gpu-check-b")
    record("claim refused for other instance", not r2["ok"] and "held by run" in r2.get("error", ""),
           r2.get("error", "started!"))
    ex = agent.wait_exit(run, timeout=60)
    out = agent.console(run).decode(errors="replace")
    devices = [json.loads(l) for l in out.splitlines() if l.startswith("{\"device\"")]
    record("gpucheck exit", ex is not None and ex.get("exit_code") == 0, f"exited {ex}")
    record("run saw exactly its GPU", len(devices) == 1 and devices[0]["uuid"] == target["uuid"],
           f"given index {target['index']} ({target['uuid']}), run saw {[d['uuid'] for d in devices]}")
    return devices


def check_torch(agent, python, workdir, gpus):
    probe = subprocess.run([python, "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 3)"],
                           capture_output=True)
    if probe.returncode != 0:
        record("torch run", None, f"{python}: torch with CUDA not importable (rc {probe.returncode})")
        return
    script = ("import torch\n"
              "d = torch.device('cuda')\n"
              "print('device', torch.cuda.get_device_name(0), 'count', torch.cuda.device_count())\n"
              "x = torch.randn(2048, 512, device=d); w = torch.randn(512, 10, device=d, requires_grad=True)\n"
              "opt = torch.optim.SGD([w], lr=0.01)\n"
              "for step in range(200):\n"
              "    loss = (x @ w).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()\n"
              "    if step % 50 == 0: print(f'step {step} loss {loss.item():.4f}')\n"
              "print('final loss', loss.item())\n")
    run = f"torch-{int(time.time())}"
    r = agent.request("start", run=run, argv=[python, "-c", script], workdir=workdir, env={},
                      gpus=[gpus[0]["index"]], client="gpu-check-a")
    if not r["ok"]:
        record("torch run", False, r.get("error"))
        return
    agent.request("tail", run=run, offset=0, follow=True)
    ex = agent.wait_exit(run, timeout=300)
    time.sleep(0.5)
    out = agent.console(run).decode(errors="replace")
    m = re.search(r"device (.+?) count (\d+)", out)
    ok = ex is not None and ex.get("exit_code") == 0 and m and m.group(1) == gpus[0]["name"] and m.group(2) == "1"
    record("torch run", bool(ok), f"exit {ex and ex.get('exit_code')}; console: {out.strip()[-300:]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--gpucheck", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--report")
    a = ap.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("SKIP  no nvidia-smi on this machine: the GPU check needs an NVIDIA GPU and driver")
        return 0
    state = tempfile.mkdtemp(prefix="ty-gpucheck-state-")
    work = tempfile.mkdtemp(prefix="ty-gpucheck-work-")
    agent = Agent(os.path.abspath(a.agent), state)
    try:
        gpus = check_inventory(agent)
        if gpus:
            check_gpucheck(agent, gpus, os.path.abspath(a.gpucheck), work)
            check_torch(agent, a.python, work, gpus)
    finally:
        agent.close()
    text = "\n".join(f"| {n} | {s} | {d} |" for n, s, d in RESULTS)
    if a.report:
        with open(a.report, "w") as f:
            f.write(f"GPU check {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n\n"
                    "| check | result | detail |\n|---|---|---|\n" + text + "\n")
    return 1 if any(s == "FAIL" for _, s, _ in RESULTS) else 0


if __name__ == "__main__":
    sys.exit(main())
