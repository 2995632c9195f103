"""Benchmark the call layer: replay from a 100k-call store, and recording throughput.

    python benchmarks/bench_callstore.py            # writes results.json["callstore"] + README
    python benchmarks/bench_callstore.py --no-write # print only

1. Replay. A store of ``--n-store`` (100k) synthetic but well-formed calls in 8 shards (as
   8 parallel jobs would leave it) is built in a temporary folder. Timed: loading the store
   the first time (every record parsed once, the per-shard index written beside each shard)
   and again (cached index validated by the shards' sha256, records parsed on demand), plain
   key lookups, and ``run_calls`` in replay mode for all 100k requests end to end (key
   computation + load + lookup + every served record verified: its digest, its request shown
   to hash to its key (its parts equal to those the key was just made from), the fields replay
   reads + result objects; not the job's one
   composition of its Hydra config, which costs the same for 10 calls or 100k). Targets: loading
   at 100k records/s or more, replay end to end at 50k calls/s or more.
2. Recording. ``run_calls(mode="record")`` against the fault-free fake OpenAI server (its own
   process) with a fixed per-request latency, at 1, 8, 32, 128 and 512 concurrent requests,
   ``--rounds`` times the concurrency calls each (at least ``--min-calls``): a run's first
   round opens the connections and waits a whole latency for its first answers, a cost a
   recording of thousands of calls pays once. The bound is ``concurrency / latency`` calls
   per second; the reported fraction is measured / bound. Every call is fsynced before it
   counts as done (calls that finish together share one fsync), as in a real run.
3. The client's floor: the same requests at 128 in flight through the openai client alone
   (``client.post`` and the response read, nothing else: no retries, deadline, claims or
   store). What the official client costs per call bounds what recording can reach.

Wall-clock rates depend on what else runs on the machine: the 1-minute load average is
recorded at the start and end and beside each recording row. CPU seconds of this process
(and of the server process) are the load-robust figures.

Numbers depend on the machine and on whatever else runs on it; the environment is recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from results_io import (  # noqa: E402
    RESULTS,
    commit_text,
    git_state,
    markers,
    update_readme,
    update_results,
)

from analysis.llm.calls import (  # noqa: E402
    COMMIT_DELAY_S,
    ChatRequest,
    call_key,
    now_iso,
    run_calls,
)
from analysis.llm.keys import effective_params  # noqa: E402
from analysis.llm.models import ModelSpec  # noqa: E402
from analysis.llm.store import load_index, record_line  # noqa: E402
from analysis.settings import LlmConfig  # noqa: E402
from analysis.workflow_config import compose_typed  # noqa: E402

START, END = markers("callstore")


def llm_settings(**changes: float) -> LlmConfig:
    """The shipped ``llm`` settings (``config/llm/``, the only copy of the defaults), with the
    benchmark's own ``changes`` (range-checked like an override)."""
    return dataclasses.replace(compose_typed()[0].llm, **changes)


def sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def _request(i: int) -> ChatRequest:
    """A request shaped like a stage-2 relevance vote (a few hundred characters)."""
    return ChatRequest.from_prompt(
        f"User profile attribute {i}: the user enjoys hiking in the Alps and cooks vegan food. "
        f"Prompt {i % 997}: recommend a weekend plan. Is the attribute relevant? YES or NO.",
        system="You decide whether a profile attribute is relevant to a prompt.",
        params={"max_tokens": 2},
        custom_id=f"item-{i}",
    )


def build_store(root: Path, model: ModelSpec, n: int, shards: int = 8) -> list[ChatRequest]:
    """Write ``n`` valid records, digest first as the writer writes them (bulk, without
    per-line fsync: only replay is timed here)."""
    requests = [_request(i) for i in range(n)]
    folder = root / "stage2" / model.name
    folder.mkdir(parents=True)
    handles = [open(folder / f"{s}.jsonl", "wb") for s in range(shards)]
    ident = model.identity()
    for i, req in enumerate(requests):
        answer = "YES" if i % 3 else "NO"
        record = {
            "key": call_key(model, req, "v1"),
            "stage": "stage2",
            "model_name": model.name,
            "model": ident,
            "prompt_version": "v1",
            "request": {
                "messages": list(req.messages),
                "params": effective_params(model.params, req.params),
                "sample_index": 0,
            },
            "response": {
                "id": f"chatcmpl-{i}",
                "object": "chat.completion",
                "created": 1700000000,
                "model": model.name,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 60, "completion_tokens": 1, "total_tokens": 61},
            },
            "usage": {"prompt_tokens": 60, "completion_tokens": 1, "total_tokens": 61},
            "latency_s": 0.4,
            "created": now_iso(),
            "system_fingerprint": None,
            "cost_usd": 0.0,
            "executor": "direct",
            "attempts": 1,
            "revision": 0,
        }
        handles[i % shards].write(record_line(record))
    for h in handles:
        h.close()
    return requests


def bench_replay(n: int) -> dict:
    model = ModelSpec("bench-model", "http://127.0.0.1:1/v1", None, {"temperature": 0.0})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        requests = build_store(root, model, n)
        build_s = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))

        t0, c0 = time.perf_counter(), time.process_time()
        index = load_index(root, "stage2", model.name)  # builds and caches the shard indexes
        cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(index) == n and len(list(root.rglob("*.idx"))) == 8
        del index
        t0, c0 = time.perf_counter(), time.process_time()
        index = load_index(root, "stage2", model.name)
        load_s, load_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(index) == n

        keys = list(index)
        random.Random(0).shuffle(keys)
        t0 = time.perf_counter()
        hits = sum(1 for k in keys if k in index)
        lookup_s = time.perf_counter() - t0
        assert hits == n
        del index

        settings = llm_settings()  # a job composes its config once, whatever its calls
        t0, c0 = time.perf_counter(), time.process_time()
        results = run_calls(
            model,
            requests,
            stage="stage2",
            store=root,
            prompt_version="v1",
            settings=settings,
            progress=False,
        )
        replay_s, replay_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(results) == n and all(r.cached for r in results)
    return {
        "n_calls": n,
        "store_mb": sig(size / 1e6),
        "build_seconds": sig(build_s),
        "first_load_seconds": sig(cold_s),
        "first_load_cpu_seconds": sig(cold_cpu),
        "first_load_records_per_second": sig(n / cold_s),
        "index_load_seconds": sig(load_s),
        "index_load_cpu_seconds": sig(load_cpu),
        "index_load_records_per_second": sig(n / load_s),
        "index_load_records_per_cpu_second": sig(n / load_cpu),
        "lookups_per_second": sig(n / lookup_s),
        "replay_seconds_end_to_end": sig(replay_s),
        "replay_cpu_seconds_end_to_end": sig(replay_cpu),
        "replay_calls_per_second_end_to_end": sig(n / replay_s),
        "replay_calls_per_cpu_second_end_to_end": sig(n / replay_cpu),
    }


def load_http_stack() -> None:
    """Import the openai client now: ``run_calls`` loads it at a process's first recording (a
    job pays it once; replay never does), and the clock should time calls, not imports."""
    import analysis.llm.client  # noqa: F401


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc), to see what the server costs."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def server_process(latency_s: float) -> Iterator[tuple[str, int]]:
    """The fake server in its own process, so it does not share the client's GIL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_server", "--latency-ms", str(latency_s * 1000)],
        stdout=subprocess.PIPE,
        cwd=BENCH_DIR.parent,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def throughput_row(
    conc: int, n: int, wall: float, client_cpu: float, server_cpu: float, latency_s: float
) -> dict:
    """One recording measurement: calls per second against the bound concurrency / latency,
    and the client's and the server's CPU per call."""
    bound = conc / latency_s
    return {
        "concurrency": conc,
        "calls": n,
        "seconds": sig(wall),
        "client_cpu_ms_per_call": sig(1000 * client_cpu / n, 3),
        "server_cpu_ms_per_call": sig(1000 * server_cpu / n, 3),
        "calls_per_second": sig(n / wall),
        "bound_calls_per_second": sig(bound),
        "fraction_of_bound": sig(n / wall / bound, 3),
    }


def bench_record(
    latency_s: float, concurrencies: list[int], rounds: int, min_calls: int
) -> list[dict]:
    rows = []
    settings = llm_settings(timeout_s=30, max_retries=2, backoff_base_s=0.01)
    load_http_stack()
    with server_process(latency_s) as (base_url, server_pid):
        for conc in concurrencies:
            n = max(min_calls, rounds * conc)
            model = ModelSpec(
                "bench-model", base_url, None, {"temperature": 0.0}, max_concurrency=conc
            )
            requests = [
                ChatRequest.from_prompt(f"c{conc} call {i}", params={"max_tokens": 4})
                for i in range(n)
            ]
            with tempfile.TemporaryDirectory() as tmp:
                load = os.getloadavg()[0]
                t0, c0, s0 = time.perf_counter(), time.process_time(), process_cpu_s(server_pid)
                results = run_calls(
                    model,
                    requests,
                    stage="bench",
                    store=Path(tmp),
                    mode="record",
                    settings=settings,
                    progress=False,
                )
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                server_cpu = process_cpu_s(server_pid) - s0
                assert len(list(Path(tmp).rglob("*.jsonl"))) == 1
            assert all(r.error is None and not r.cached for r in results)
            row = throughput_row(conc, n, wall, cpu, server_cpu, latency_s)
            rows.append({**row, "load_average_1min": sig(load, 3)})
            print(
                f"  concurrency {conc:>3}: {row['calls_per_second']:8.1f} calls/s = "
                f"{row['fraction_of_bound']:.2f} of bound (CPU ms/call: client "
                f"{row['client_cpu_ms_per_call']:.2f}, server "
                f"{row['server_cpu_ms_per_call']:.2f}; load {load:.1f})",
                file=sys.stderr,
            )
    return rows


def _record_shard(
    base_url: str,
    store: str,
    shard: int,
    conc: int,
    n: int,
    ready: object,
    go: object,
    out: object,
) -> None:
    """One shard job's recording (a process of its own): says ``ready`` once its imports are
    done, starts when ``go`` is set."""
    model = ModelSpec("bench-model", base_url, None, {"temperature": 0.0}, max_concurrency=conc)
    requests = [
        ChatRequest.from_prompt(f"shard {shard} call {i}", params={"max_tokens": 4})
        for i in range(n)
    ]
    settings = llm_settings(timeout_s=30, max_retries=2, backoff_base_s=0.01)
    load_http_stack()
    ready.put(shard)
    go.wait()
    c0 = time.process_time()
    results = run_calls(
        model,
        requests,
        stage="bench",
        store=Path(store),
        mode="record",
        shard=str(shard),
        settings=settings,
        progress=False,
    )
    assert all(r.error is None and not r.cached for r in results)
    out.put(time.process_time() - c0)


def bench_record_sharded(latency_s: float, conc: int, processes: int, rounds: int) -> dict:
    """``conc`` requests in flight split over ``processes`` shard processes, as ``llm.shards``
    splits a step over parallel jobs (each its own event loop and client), one store."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    n = rounds * conc
    ready, go, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    with server_process(latency_s) as (base_url, server_pid), tempfile.TemporaryDirectory() as tmp:
        procs = [
            ctx.Process(
                target=_record_shard,
                args=(base_url, tmp, i, conc // processes, n // processes, ready, go, out),
            )
            for i in range(processes)
        ]
        for proc in procs:
            proc.start()
        for _ in procs:  # every child imported and waiting: only the recording is timed
            ready.get(timeout=120)
        load = os.getloadavg()[0]
        s0, t0 = process_cpu_s(server_pid), time.perf_counter()
        go.set()
        client_cpu = sum(out.get(timeout=300) for _ in procs)
        wall = time.perf_counter() - t0
        for proc in procs:
            proc.join(30)
        server_cpu = process_cpu_s(server_pid) - s0
        assert len(list(Path(tmp).rglob("*.jsonl"))) == processes
    row = throughput_row(conc, n, wall, client_cpu, server_cpu, latency_s)
    return {**row, "processes": processes, "load_average_1min": sig(load, 3)}


def bench_client_floor(latency_s: float, conc: int, rounds: int) -> dict:
    """The openai client alone at ``conc`` in flight: ``post`` and the body read per call, with
    the client, transport and pool ``run_calls`` uses, and nothing of the call layer around
    it. Its CPU per call is what no change to the call layer can go below."""
    import asyncio

    import httpx2

    from analysis.llm.client import make_client

    n = rounds * conc
    settings = llm_settings(timeout_s=30)

    async def calls(base_url: str) -> None:
        client = make_client(base_url, "no-key-needed", settings, max_concurrency=conc)
        slots = asyncio.Semaphore(conc)
        todo = iter(range(n))

        async def worker() -> None:
            for i in todo:
                async with slots:
                    body = {
                        "model": "bench-model",
                        "messages": [{"role": "user", "content": f"floor call {i}"}],
                        "max_tokens": 4,
                    }
                    raw = await client.post("/chat/completions", body=body, cast_to=httpx2.Response)
                    json.loads(raw.content)

        await asyncio.gather(*(worker() for _ in range(conc)))
        await client.close()

    with server_process(latency_s) as (base_url, server_pid):
        s0, t0, c0 = process_cpu_s(server_pid), time.perf_counter(), time.process_time()
        asyncio.run(calls(base_url))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        server_cpu = process_cpu_s(server_pid) - s0
    return throughput_row(conc, n, wall, cpu, server_cpu, latency_s)


def readme_section(res: dict) -> str:
    rp, rec, env = res["replay"], res["record"], res["environment"]
    load0, load1 = env["load_average_1min_at_start"], env["load_average_1min_at_end"]
    lines = [
        START,
        "## Call store (`bench_callstore.py`)",
        "",
        "Replay from a committed store and recording throughput of `analysis.llm.run_calls`,",
        f"measured at commit {commit_text(res.get('git'))}",
        f"(python {env['python']}, {env['cpus']} CPUs shared with other jobs: 1-min load average",
        f"{load0} at the start and {load1} at the end; that load inflates wall times and lowers",
        "wall-clock rates (CPU times are this process's own). Rerun",
        "`python benchmarks/bench_callstore.py` to refresh.",
        "",
        f"**Replay**, store of {rp['n_calls']:,} calls in 8 shards ({rp['store_mb']} MB):",
        "",
        "| step | wall | CPU | rate (wall) | rate (CPU) |",
        "|---|---:|---:|---:|---:|",
        f"| first load: parse every record, write each shard's index | "
        f"{rp['first_load_seconds']} s | {rp['first_load_cpu_seconds']} s | "
        f"{rp['first_load_records_per_second']:,.0f} records/s | "
        f"{rp['n_calls'] / rp['first_load_cpu_seconds']:,.0f} records/s |",
        f"| load with the cached index (sha256 of every shard checked) | "
        f"{rp['index_load_seconds']} s | {rp['index_load_cpu_seconds']} s | "
        f"{rp['index_load_records_per_second']:,.0f} records/s | "
        f"{rp['index_load_records_per_cpu_second']:,.0f} records/s |",
        f"| key lookups in the loaded index | | | {rp['lookups_per_second']:,.0f} lookups/s | |",
        f"| `run_calls` replay of all calls, end to end (keys + load + lookup + each record "
        "verified: digest, key, fields + results) | "
        f"{rp['replay_seconds_end_to_end']} s | {rp['replay_cpu_seconds_end_to_end']} s | "
        f"{rp['replay_calls_per_second_end_to_end']:,.0f} calls/s | "
        f"{rp['replay_calls_per_cpu_second_end_to_end']:,.0f} calls/s |",
        "",
        "Rate (CPU) = records or calls per CPU-second of this process: what an idle core gives."
        " Targets: loading at 100,000 records/s or more, replay end to end at 50,000 calls/s or"
        " more.",
        "",
        f"**Recording** against the fake OpenAI-compatible server (own process) with a fixed "
        f"{res['record_latency_s'] * 1000:.0f} ms",
        "latency per request; every call is fsynced before it counts as done (calls finishing",
        "within the group commit's window share one fsync). Bound = concurrency / latency. "
        + (
            f"Each row makes {res['record_rounds']} times its concurrency in calls: a run's "
            "first round opens the connections and waits a whole latency for its first "
            "answers, a cost a recording of thousands of calls pays once."
            if "record_rounds" in res
            else "Each row makes 8 times its concurrency in calls."
        ),
        "",
        "| concurrency | calls | calls/s | bound | fraction of bound "
        "| CPU ms/call: client | server | load average |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rec:
        lines.append(
            f"| {row['concurrency']} | {row['calls']} | {row['calls_per_second']:.1f} | "
            f"{row['bound_calls_per_second']:.0f} | {row['fraction_of_bound']:.2f} | "
            f"{row['client_cpu_ms_per_call']} | {row['server_cpu_ms_per_call']} | "
            f"{row['load_average_1min']} |"
        )
    sharded = res.get("record_sharded")
    if sharded:
        lines += [
            "",
            f"The same {sharded['concurrency']} requests in flight split over "
            f"{sharded['processes']} shard processes (as `llm.shards={sharded['processes']}` "
            "splits a step over",
            "parallel jobs: each its own event loop and client, one store):",
            "",
            "| concurrency | processes | calls | calls/s | bound | fraction of bound "
            "| CPU ms/call: clients | server | load average |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {sharded['concurrency']} | {sharded['processes']} | {sharded['calls']} | "
            f"{sharded['calls_per_second']:.1f} | {sharded['bound_calls_per_second']:.0f} | "
            f"{sharded['fraction_of_bound']:.2f} | {sharded['client_cpu_ms_per_call']} | "
            f"{sharded['server_cpu_ms_per_call']} | {sharded['load_average_1min']} |",
        ]
    floor = res.get("client_floor")
    if floor:
        lines += [
            "",
            "The openai client alone: the same requests through `client.post` and the body read,",
            "with the client, transport and pool `run_calls` uses and nothing of the call layer",
            "(no retries, deadline, claims or store): what no change to the call layer goes below.",
            "",
            "| concurrency | calls | calls/s | bound | fraction of bound "
            "| CPU ms/call: client | server |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {floor['concurrency']} | {floor['calls']} | {floor['calls_per_second']:.1f} | "
            f"{floor['bound_calls_per_second']:.0f} | {floor['fraction_of_bound']:.2f} | "
            f"{floor['client_cpu_ms_per_call']} | {floor['server_cpu_ms_per_call']} |",
        ]
    by_conc = {row["concurrency"]: row for row in rec}
    top = by_conc.get(128) or by_conc[max(by_conc)]  # 128: the concurrency of the target
    per_call = top["client_cpu_ms_per_call"] + top["server_cpu_ms_per_call"]
    cpus = env["cpus"] or 1
    one_loop = 1000 / top["client_cpu_ms_per_call"]  # calls/s one client process can make
    lines += [
        "",
        "Below the bound the limit is CPU, not the endpoint. At concurrency "
        f"{top['concurrency']} the client spends",
        f"{top['client_cpu_ms_per_call']} ms of CPU per call and one event loop runs on one "
        f"core: at most ~{one_loop:,.0f} calls/s",
        f"for one client process ({one_loop / top['bound_calls_per_second']:.2f} of the bound), "
        f"and client and server together ({per_call:.2f} ms) at most "
        f"~{1000 * cpus / per_call:,.0f} calls/s on {cpus} cores.",
        "Under load this process got only a share of a core, so the fraction of bound measured",
        "then is a lower bound for an idle machine; the CPU per call is the comparable figure.",
        "The client is one openai client per endpoint and event loop over the aiohttp transport",
        "(`openai[aiohttp]`, a connection kept alive per slot) and posts the chat body through",
        "its own `post`; a fixed set of workers takes the calls, a request's slot is free again",
        "once its response is in (its record's fsync does not hold it), a call's first attempt",
        "is made before any retry state exists (tenacity takes over at a failure), and while",
        "recording the garbage collector leaves the objects that existed before alone and runs",
        "its young collection less often (`gc_for_recording`)."
        + (
            f" A group commit waits {1000 * res['record_commit_delay_s']:g} ms for more records "
            "before it writes (`COMMIT_DELAY_S`)."
            if "record_commit_delay_s" in res
            else ""
        )
        + (
            f" At {top['concurrency']} the call layer (retries, the attempt's deadline, the "
            "key's claim, the look for another run's record, the record and its commit) adds "
            f"{top['client_cpu_ms_per_call'] - floor['client_cpu_ms_per_call']:.2f} ms to the "
            f"client's own {floor['client_cpu_ms_per_call']} ms per call."
            if floor and floor["concurrency"] == top["concurrency"]
            else ""
        ),
        "Against real endpoints (seconds per call) the bound is what",
        "limits; shards let parallel jobs add client processes.",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-store", type=int, default=100_000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 128, 512])
    parser.add_argument(
        "--rounds", type=int, default=32, help="calls per recording row, times its concurrency"
    )
    parser.add_argument("--min-calls", type=int, default=40)
    parser.add_argument(
        "--shards", type=int, default=2, help="shard processes of the split recording row"
    )
    parser.add_argument(
        "--split-concurrency",
        type=int,
        default=128,
        help="requests in flight of the split recording row and of the client-floor row",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--readme-only", action="store_true", help="rewrite the README section from results.json"
    )
    args = parser.parse_args(argv)
    if args.readme_only:
        update_readme("callstore", readme_section(json.loads(RESULTS.read_text())["callstore"]))
        return 0

    load_start, git = os.getloadavg()[0], git_state()
    print(f"replay: building a {args.n_store}-call store ...", file=sys.stderr)
    replay = bench_replay(args.n_store)
    print(json.dumps(replay, indent=1), file=sys.stderr)
    print("record:", file=sys.stderr)
    latency_s = args.latency_ms / 1000.0
    record = bench_record(latency_s, args.concurrency, args.rounds, args.min_calls)
    result = {
        "environment": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1min_at_start": sig(load_start, 3),
            "load_average_1min_at_end": sig(os.getloadavg()[0], 3),
        },
        "replay": replay,
        "record_latency_s": latency_s,
        "record_rounds": args.rounds,
        "record_commit_delay_s": COMMIT_DELAY_S,
        "record": record,
        "record_sharded": bench_record_sharded(
            latency_s, args.split_concurrency, args.shards, args.rounds
        ),
        "client_floor": bench_client_floor(latency_s, args.split_concurrency, args.rounds),
        "git": git,
    }
    print(json.dumps(result, indent=1))
    if not args.no_write:
        update_readme("callstore", readme_section(update_results("callstore", result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
