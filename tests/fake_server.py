"""A fault-injecting OpenAI-compatible server on 127.0.0.1, for tests and benchmarks.

Test support, not part of the installed package (``pip install .`` ships ``analysis`` only):
tests import it as ``tests.fake_server``, and ``benchmarks/bench_callstore.py`` runs it from
the checkout as ``python -m tests.fake_server``.

It speaks real HTTP, so the official client, its transport and our retry policy are exercised
end to end (openai 3.x uses httpx2, which the usual HTTP mocking libraries do not intercept).
It implements ``/v1/chat/completions``, ``/v1/models``, ``/v1/files`` and ``/v1/batches``.

What a request gets is scripted per *last message content*: ``server.plan[content]`` is a list
of actions for its successive attempts (then ``ok``). Actions:

``ok`` | ``slow:<s>`` (answer after s seconds) | ``drip:<s>`` (headers at once, then the
body one byte every s seconds: no single read waits long, the whole answer takes minutes) |
``429`` | ``429:ra=<s>`` (Retry-After) |
``429:ms=<ms>`` (retry-after-ms) | ``500`` | ``503`` | ``400`` | ``401`` | ``404`` |
``truncated`` (Content-Length longer than the body, then close) | ``nonjson`` (HTML body) |
``nochoices`` (JSON without choices) | ``reset`` (close without answering) |
``badcontent`` (200, but the content is not the JSON that was asked for) |
``leak`` (200 whose body echoes the caller's Authorization header, to test redaction) |
``leak500`` (a 500 whose error body echoes it).

The Batch API requests are scripted per operation: ``server.op_plan[op]`` (``op`` one of
``upload``, ``create``, ``list``, ``poll``, ``download``) lists actions for its successive
requests (then ``ok``): ``ok`` | ``drip:<s>`` | an HTTP status such as ``500``.
``op_requests[op]`` counts the requests of each operation.

``served[content]`` counts answers that were delivered as valid completions, so a test can
prove that no call was made twice. The answer is deterministic: ``echo: <content>`` (or
``{"echo": <content>}`` in JSON mode). This is not a model; it never enters study results.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK_ACTIONS = frozenset({"ok", "badcontent", "leak"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256
    fake: FakeOpenAI


class FakeOpenAI:
    """The server; use as a context manager. ``base_url`` ends in ``/v1``."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        api_key: str | None = None,
        batch_polls_to_complete: int = 1,
    ) -> None:
        self.latency_s = latency_s
        self.api_key = api_key
        self.batch_polls_to_complete = batch_polls_to_complete
        self.plan: dict[str, list[str]] = {}
        self.attempts: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []  # (action, content) per completion request
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls: Counter[str] = Counter()
        self.batch_errors: dict[str, Any] | None = None  # set: every batch fails with these
        self.batch_output_edit: Callable[[bytes], bytes] | None = None  # e.g. tear a line
        self.op_plan: dict[str, list[str]] = {}  # Batch API operation -> actions per request
        self.op_requests: Counter[str] = Counter()
        self.header_names: set[str] = set()  # lower-cased, of every request so far
        self.in_flight = 0  # chat requests being answered right now
        self.max_in_flight = 0  # the most ever answered at once (tests the concurrency bound)
        self.lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------- lifecycle
    def start(self) -> FakeOpenAI:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ----------------------------------------------------------- behaviour
    def next_action(self, content: str) -> str:
        with self.lock:
            n = self.attempts[content]
            self.attempts[content] += 1
            steps = self.plan.get(content, [])
            action = steps[n] if n < len(steps) else "ok"
            self.log.append((action, content))
            return action

    def next_op_action(self, op: str) -> str:
        """The scripted action of this request of a Batch API operation (default ``ok``)."""
        with self.lock:
            n = self.op_requests[op]
            self.op_requests[op] += 1
            steps = self.op_plan.get(op, [])
            return steps[n] if n < len(steps) else "ok"

    def completion(self, body: dict[str, Any], *, action: str, auth: str = "") -> dict[str, Any]:
        """The deterministic answer to a chat request (``action`` in OK_ACTIONS)."""
        messages = body.get("messages") or [{}]
        content = str(messages[-1].get("content", ""))
        fmt = (body.get("response_format") or {}).get("type")
        if action == "badcontent":
            answer = "this is not json {"
        elif fmt in ("json_object", "json_schema"):
            answer = json.dumps({"echo": content})
        else:
            answer = f"echo: {content}"
        if action == "leak":
            answer += f" (you sent {auth})"
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        completion_tokens = len(answer.split())
        n = int(body.get("n") or 1)
        out: dict[str, Any] = {
            "id": "chatcmpl-fake-" + hashlib.sha256(f"{content}|{n}".encode()).hexdigest()[:12],
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
                for i in range(n)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if action == "leak":
            out["debug"] = {"authorization": auth, "echo_headers": f"Authorization: {auth}"}
        with self.lock:
            self.served[content] += 1
        return out

    # ----------------------------------------------------------- batch
    def _run_batch(self, batch: dict[str, Any]) -> None:
        """Answer every line of the input file (plan actions apply, one attempt each)."""
        if self.batch_errors is not None:
            batch.update(status="failed", errors=self.batch_errors)
            return
        lines = self.files[batch["input_file_id"]]["content"].decode().splitlines()
        out, err = [], []
        for i, line in enumerate(x for x in lines if x.strip()):
            item = json.loads(line)
            body = item["body"]
            content = str((body.get("messages") or [{}])[-1].get("content", ""))
            action = self.next_action(content)
            if action in OK_ACTIONS:
                resp = {
                    "status_code": 200,
                    "request_id": f"req_{i}",
                    "body": self.completion(body, action=action),
                }
                out.append(
                    {
                        "id": f"bl_{i}",
                        "custom_id": item["custom_id"],
                        "response": resp,
                        "error": None,
                    }
                )
            else:
                code = int(action.split(":")[0]) if action[:3].isdigit() else 500
                resp = {
                    "status_code": code,
                    "request_id": f"req_{i}",
                    "body": {"error": {"message": f"fake {action}"}},
                }
                err.append(
                    {
                        "id": f"bl_{i}",
                        "custom_id": item["custom_id"],
                        "response": resp,
                        "error": None,
                    }
                )
        content = b"".join(json.dumps(x).encode() + b"\n" for x in out)
        if self.batch_output_edit is not None:
            content = self.batch_output_edit(content)
        batch["output_file_id"] = self._add_file("batch_output", "output.jsonl", content)
        batch["error_file_id"] = (
            self._add_file("batch_output", "errors.jsonl", err) if err else None
        )
        batch["status"] = "completed"
        batch["request_counts"] = {
            "total": len(out) + len(err),
            "completed": len(out),
            "failed": len(err),
        }

    def _add_file(self, purpose: str, filename: str, lines: Any) -> str:
        if isinstance(lines, bytes):
            content = lines
        else:
            content = "".join(json.dumps(x) + "\n" for x in lines).encode()
        with self.lock:
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = {
                "id": fid,
                "object": "file",
                "bytes": len(content),
                "created_at": 1700000000,
                "filename": filename,
                "purpose": purpose,
                "status": "processed",
                "content": content,
            }
        return fid

    def file_object(self, fid: str) -> dict[str, Any]:
        return {k: v for k, v in self.files[fid].items() if k != "content"}

    def batch_object(self, bid: str) -> dict[str, Any]:
        return dict(self.batches[bid])


def _parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """name -> (filename, bytes) of a multipart/form-data body (stdlib only)."""
    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    parts = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return parts


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes; with Nagle on, the body waits for a delayed ACK
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests read counters, not access logs

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake

    def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(code)
        ctype = "application/json" if not isinstance(payload, bytes) else "application/octet-stream"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def _drip(self, raw: bytes, every_s: float) -> None:
        """Send ``raw`` as a 200 one byte at a time; stop when the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.close_connection = True
        try:
            for i in range(len(raw)):
                self.wfile.write(raw[i : i + 1])
                self.wfile.flush()
                time.sleep(every_s)
        except OSError:
            return

    def _op_send(self, op: str, payload: Any) -> None:
        """A Batch API answer, as scripted by ``op_plan[op]`` (dripped, an error, or at once)."""
        code, _, arg = self.fake.next_op_action(op).partition(":")
        if code == "drip":
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            return self._drip(raw, float(arg))
        if code.isdigit():
            return self._error(int(code), f"fake {op} {code}")
        self._send(200, payload)

    def _error(self, code: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send(code, {"error": {"message": message, "type": "fake", "code": code}}, headers)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorized(self) -> bool:
        """Whether the request may go on (else answered 401); every request passes here first,
        so it is also where the names of the headers clients send are noted."""
        with self.fake.lock:
            self.fake.header_names.update(name.lower() for name in self.headers)
        if self.fake.api_key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {self.fake.api_key}":
            return True
        self._error(401, "invalid api key")
        return False

    # ----------------------------------------------------------- routes
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if not self._authorized():
            return
        path = self.path.split("?")[0]
        fake = self.fake
        if path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        elif m := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            if m[1] not in fake.files:
                return self._error(404, "no such file")
            self._op_send("download", fake.files[m[1]]["content"])
        elif m := re.fullmatch(r"/v1/files/([\w-]+)", path):
            if m[1] not in fake.files:
                return self._error(404, "no such file")
            self._send(200, fake.file_object(m[1]))
        elif m := re.fullmatch(r"/v1/batches/([\w-]+)", path):
            bid = m[1]
            if bid not in fake.batches:
                return self._error(404, "no such batch")
            with fake.lock:
                fake.batch_polls[bid] += 1
                polls = fake.batch_polls[bid]
                batch = fake.batches[bid]
                if batch["status"] == "validating":
                    batch["status"] = "in_progress"
            if batch["status"] == "in_progress" and polls >= fake.batch_polls_to_complete:
                fake._run_batch(batch)
            self._op_send("poll", fake.batch_object(bid))
        elif path == "/v1/batches":
            data = [fake.batch_object(b) for b in sorted(fake.batches, reverse=True)]
            self._op_send(
                "list",
                {
                    "object": "list",
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                },
            )
        else:
            self._error(404, f"no route {path}")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._body()
        if not self._authorized():
            return
        path = self.path.split("?")[0]
        if path == "/v1/chat/completions":
            return self._chat(json.loads(body))
        fake = self.fake
        if path == "/v1/files":
            parts = _parse_multipart(self.headers["Content-Type"], body)
            filename, content = parts["file"]
            purpose = parts.get("purpose", (None, b"batch"))[1].decode()
            fid = fake._add_file(purpose, filename or "upload.jsonl", content)
            return self._op_send("upload", fake.file_object(fid))
        if path == "/v1/batches":
            req = json.loads(body)
            if req.get("input_file_id") not in fake.files:
                return self._error(400, "unknown input_file_id")
            with fake.lock:
                bid = f"batch_{len(fake.batches) + 1:04d}"
                fake.batches[bid] = {
                    "id": bid,
                    "object": "batch",
                    "endpoint": req["endpoint"],
                    "input_file_id": req["input_file_id"],
                    "completion_window": req["completion_window"],
                    "status": "validating",
                    "created_at": 1700000000,
                    "output_file_id": None,
                    "error_file_id": None,
                    "metadata": req.get("metadata"),
                }
            return self._op_send("create", fake.batch_object(bid))
        self._error(404, f"no route {path}")

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.fake
        with fake.lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            self._chat_action(body)
        finally:
            with fake.lock:
                fake.in_flight -= 1

    def _chat_action(self, body: dict[str, Any]) -> None:
        fake = self.fake
        content = str((body.get("messages") or [{}])[-1].get("content", ""))
        action = fake.next_action(content)
        if fake.latency_s:
            time.sleep(fake.latency_s)
        code, _, arg = action.partition(":")
        if action in OK_ACTIONS:
            auth = self.headers.get("Authorization", "")
            return self._send(200, fake.completion(body, action=action, auth=auth))
        if code == "slow":
            time.sleep(float(arg))
            return self._send(200, fake.completion(body, action="ok"))
        if code == "drip":
            self._drip(json.dumps(fake.completion(body, action="ok")).encode(), float(arg))
            with fake.lock:  # counted as delivered only if the client read it to the end
                fake.served[content] -= 1
            return
        if code == "truncated":
            raw = json.dumps(fake.completion(body, action="ok")).encode()
            with fake.lock:  # the client never got it
                fake.served[content] -= 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw[: len(raw) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if code == "leak500":  # an error body that echoes the caller's credentials
            auth = self.headers.get("Authorization", "")
            return self._error(500, f"upstream failed for Authorization: {auth}")
        if code == "reset":
            self.close_connection = True
            return
        if code == "nonjson":
            raw = b"<html><body>502 Bad Gateway (proxy)</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            return
        if code == "nochoices":
            return self._send(200, {"object": "chat.completion", "id": "x", "choices": []})
        if code.isdigit():
            headers = {}
            if arg.startswith("ra="):
                headers["Retry-After"] = arg[3:]
            elif arg.startswith("ms="):
                headers["retry-after-ms"] = arg[3:]
            return self._error(int(code), f"fake {action}", headers)
        self._error(500, f"unknown fake action {action!r}")


def main(argv: list[str] | None = None) -> int:
    """Serve until killed (benchmarks run it in its own process, away from the client's GIL)."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(description="fake OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    server = FakeOpenAI(latency_s=args.latency_ms / 1000.0).start()
    print(server.base_url, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
