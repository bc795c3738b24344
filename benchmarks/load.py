"""``ladder bench load``: N concurrent clients (default 32) for D seconds (default 60) against a ``ladder serve``
subprocess on the seed KB, mixing Search, QuickMatch, GetCard and SubmitTrajectory.

Method (recorded with the figures):
- the server is a real ``python -m optimizer.cli serve`` process on a fresh copy of the seed KB, with default
  settings (``server_workers`` threads) and one contributor token for SubmitTrajectory;
- clients run in ``--procs`` worker processes (so that the client side is not one GIL), ``clients / procs``
  threads each, every thread with its own channel, issuing requests back to back (closed loop, no think time);
- mix by weight: Search 40 % (texts from the retrieval query sets, a quarter of them with a random extra word, so
  the result cache sees both hits and misses), QuickMatch 30 % (random symptoms from the controlled
  vocabularies), GetCard 20 % (random seed card ids), SubmitTrajectory 10 % (a new small trajectory each: a
  durable write);
- a 5 s warm-up before the measured window; latency is per call, client side, including gRPC on loopback;
- server RSS (psutil) after start-up + warm-up ("before") and at the end of the window ("after");
- afterwards the server is stopped and every acknowledged trajectory is checked to be in the store.

Large-card variant (``--large-cards N``, issue 17): N more clients, each a contributor sending ``UpsertCard``
with a ``--large-card-mib`` body (default 3.9 MiB, under the 4 MiB message limit) back to back, while the
other clients run the mix above. Recorded: how the server answered those writes (INVALID_ARGUMENT naming
``card.body`` once the limit of ``LADDER_MAX_CARD_BODY_BYTES`` holds; before it they were stored), the
latency of the mix under the attack, and the server's RSS sampled every 0.5 s (peak). The result goes to
``load_large_cards.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import percentiles, write_result

MIX = {"Search": 40, "QuickMatch": 30, "GetCard": 20, "SubmitTrajectory": 10}
TOKEN = f"load-{os.getpid()}-{random.randrange(1 << 30):08x}-bench"  # 16+ characters (LADDER_TOKENS rule)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _queries() -> list[str]:
    import yaml

    qs = []
    for f in sorted((Path(__file__).parent / "retrieval").glob("queries_*.yaml")):
        qs += [q["query"] for q in yaml.safe_load(f.read_text())]
    return qs or ["why does argmax scalarize on Ascend", "masked load does not vectorize"]


def _trajectory_json(tid: str) -> str:
    from kb.models import ProblemRef, Round, RoundRewrite, Trajectory, Validation

    rnd = Round(index=1, levels_reached=["L1"], hypothesis="one row per program is launch bound", outcome="improved",
                rewrite=RoundRewrite(family="rows-per-program", description="8 rows per program"),
                validation=Validation(passed=True))
    return Trajectory(id=tid, problem=ProblemRef(name="softmax_rows"), backend="cuda", rounds=[rnd]).model_dump_json()


def _worker(addr: str, proc_id: int, threads: int, start: float, stop: float, data: dict) -> None:
    """One client process: ``threads`` closed-loop clients; prints {samples, errors, acked} as JSON."""
    import threading

    import grpc

    from retrieval.v1 import ladder_pb2 as pb
    from retrieval.v1 import ladder_pb2_grpc as pb_grpc

    samples: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    acked: list[str] = []
    lock = threading.Lock()
    kinds = [k for k, w in MIX.items() for _ in range(w)]
    meta = (("authorization", f"Bearer {data['token']}"),)
    body = ("large card attack body " * (1 + int(data.get("large_card_bytes", 0)) // 23))[:int(data.get(
        "large_card_bytes", 0))]

    def client(t: int) -> None:
        rng = random.Random(proc_id * 1000 + t)
        opts = [("grpc.max_send_message_length", 8 << 20), ("grpc.max_receive_message_length", 8 << 20)]
        ch = grpc.insecure_channel(addr, opts)
        k, s = pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)
        n = 0
        attacker = t < data.get("attackers", 0)
        while time.time() < stop:
            kind = "UpsertCard(large)" if attacker else rng.choice(kinds)
            if kind == "UpsertCard(large)":
                card = pb.Card(id=f"large-{proc_id}-{t}-{n}", kind="pattern", title="Large card attack",
                               summary="A contributor card whose body is megabytes long.", body=body,
                               backends=["cuda"], levels=["L1"])
                call, req, md = k.UpsertCard, pb.UpsertCardRequest(card=card), meta
            elif kind == "Search":
                text = rng.choice(data["queries"])
                if rng.random() < 0.25:
                    text += " " + rng.choice(data["words"])
                call, req, md = k.Search, pb.SearchRequest(text=text, top_k=5), ()
            elif kind == "QuickMatch":
                sym = pb.Symptoms(bottleneck_classes=rng.sample(data["bottlenecks"], 1),
                                  ir_signatures=rng.sample(data["signatures"], rng.randint(0, 2)))
                call, req, md = k.QuickMatch, pb.QuickMatchRequest(symptoms=sym, backend=rng.choice(data["backends"])), ()
            elif kind == "GetCard":
                call, req, md = k.GetCard, pb.GetCardRequest(id=rng.choice(data["ids"])), ()
            else:
                tid = f"load-{proc_id}-{t}-{n}"
                call, req, md = s.SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json=data["traj"].replace(
                    "LOAD-TID", tid)), meta
            n += 1
            t0 = time.time()
            try:
                call(req, metadata=md, timeout=60)
                ok = True
            except grpc.RpcError as e:
                ok = False
                code = e.code().name
            t1 = time.time()
            if t0 < start:  # warm-up
                continue
            with lock:
                if attacker:  # the attack's outcome is what is measured, not an error of the service
                    outcomes["stored" if ok else code] += 1
                    samples[kind].append(t1 - t0)
                elif ok:
                    samples[kind].append(t1 - t0)
                    if kind == "SubmitTrajectory":
                        acked.append(tid)
                else:
                    errors[f"{kind}:{code}"] += 1
        ch.close()

    ts = [threading.Thread(target=client, args=(t,)) for t in range(threads)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    print(json.dumps({"samples": samples, "errors": errors, "acked": acked, "outcomes": outcomes}))


def _rss_mib(pid: int) -> float:
    import psutil

    return round(psutil.Process(pid).memory_info().rss / (1 << 20), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench load", description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of the measured window")
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--procs", type=int, default=4, help="client processes the clients are spread over")
    ap.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    ap.add_argument("--large-cards", type=int, default=0, help="extra clients sending huge UpsertCard bodies")
    ap.add_argument("--large-card-mib", type=float, default=3.9, help="body size of each large card (MiB)")
    ap.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)  # internal: run one client process
    args = ap.parse_args(argv)
    if args.worker:
        _worker(**json.loads(args.worker.read_text()))
        return 0

    from kb.cardfiles import load_dir
    from kb.service import KnowledgeBase
    from kb.settings import Settings
    from kb.vocab import BOTTLENECK_CLASSES, IR_SIGNATURES

    home = Path(tempfile.mkdtemp(prefix="ladder-load-")) / "kb"
    print(f"seeding a KB in {home} ...", flush=True)
    KnowledgeBase.open(Settings(home=home)).close()
    port = _free_port()
    env = {**os.environ, "LADDER_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "LADDER_TOKENS": json.dumps({TOKEN: ["contributor"]})}
    log = home.parent / "serve.log"
    with open(log, "w") as f:
        server = subprocess.Popen([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(port)], env=env,
                                  stdout=f, stderr=subprocess.STDOUT)
    addr = f"127.0.0.1:{port}"
    try:
        from retrieval.client import GrpcKBClient

        with GrpcKBClient(addr) as c:
            c.wait_ready(timeout=900)
        queries = _queries()
        data = {"queries": queries, "words": sorted({w for q in queries for w in q.split() if len(w) > 4}),
                "ids": [c.id for c in load_dir()], "bottlenecks": sorted(BOTTLENECK_CLASSES),
                "signatures": sorted(IR_SIGNATURES), "backends": ["cuda", "ascend", "any"], "token": TOKEN,
                "traj": _trajectory_json("LOAD-TID")}
        start = time.time() + args.warmup + 3.0  # spawn + imports happen inside the warm-up
        stop = start + args.duration
        per = [args.clients // args.procs + (1 if i < args.clients % args.procs else 0) for i in range(args.procs)]
        attackers = [args.large_cards // args.procs + (1 if i < args.large_cards % args.procs else 0)
                     for i in range(args.procs)]
        data["large_card_bytes"] = int(args.large_card_mib * (1 << 20))
        procs = []
        for i, n in enumerate(per):
            spec = home.parent / f"worker-{i}.json"
            spec.write_text(json.dumps({"addr": addr, "proc_id": i, "threads": n + attackers[i], "start": start,
                                        "stop": stop, "data": data | {"attackers": attackers[i]}}))
            procs.append(subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(spec)],
                                          stdout=subprocess.PIPE, text=True))
        time.sleep(max(0.0, start - time.time()))
        rss_before, load_before = _rss_mib(server.pid), os.getloadavg()
        print(f"{args.clients} clients over {len(procs)} processes for {args.duration:.0f} s "
              f"(server RSS {rss_before} MiB) ...", flush=True)
        peak = rss_before
        while time.time() < stop:  # sample the server's memory through the window
            time.sleep(min(0.5, max(0.0, stop - time.time())))
            peak = max(peak, _rss_mib(server.pid))
        rss_after, load_after = _rss_mib(server.pid), os.getloadavg()
        results = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1]) for p in procs]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(120)

    samples: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    acked: list[str] = []
    for r in results:
        for k, v in r["samples"].items():
            samples[k] += v
        errors.update(r["errors"])
        outcomes.update(r.get("outcomes", {}))
        acked += r["acked"]
    attack = samples.pop("UpsertCard(large)", [])
    with KnowledgeBase.open(Settings(home=home)) as kb:
        stored = {t.id for t in kb.store.trajectories()}
        stored_large = sum(len(c.body) > Settings().max_card_body_bytes for c in kb.store.served_cards())
    lost = sorted(set(acked) - stored)
    everything = [x for v in samples.values() for x in v]
    payload = {
        "method": __doc__,
        "config": {"clients": args.clients, "client_procs": len(procs), "duration_s": args.duration,
                   "warmup_s": args.warmup, "mix_percent": MIX, "server_workers": Settings().server_workers,
                   "cards": len(data["ids"]), "distinct_search_texts_possible": len(queries) * (1 + len(data["words"]))},
        "requests": len(everything),
        "throughput_rps": round(len(everything) / args.duration, 1),
        "latency": percentiles(everything),
        "per_rpc": {k: {"throughput_rps": round(len(v) / args.duration, 1), **percentiles(v)}
                    for k, v in sorted(samples.items())},
        "errors": sum(errors.values()),
        "errors_by_rpc_and_code": dict(errors),
        "server_rss_mib": {"before": rss_before, "after": rss_after, "peak": peak},
        "load_average_1_5_15": {"before": [round(x, 2) for x in load_before],
                                "after": [round(x, 2) for x in load_after]},
        "acknowledged_trajectories": len(acked),
        "acknowledged_trajectories_lost": len(lost),
    }
    if args.large_cards:
        payload["large_cards"] = {"clients": args.large_cards, "body_bytes": data["large_card_bytes"],
                                  "limit_card_body_bytes": Settings().max_card_body_bytes,
                                  "outcomes": dict(outcomes), "latency": percentiles(attack) if attack else {},
                                  "stored_cards_with_large_bodies": stored_large}
    shutil.rmtree(home.parent, ignore_errors=True)
    path = write_result("load_large_cards" if args.large_cards else "load", payload, args.out)
    print(json.dumps({k: v for k, v in payload.items() if k != "method"}, indent=2))
    print(f"wrote {path}")
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
