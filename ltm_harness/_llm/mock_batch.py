"""The Batch API of the mock server, in OpenAI's shape: files uploaded for a batch, batches created, polled, listed
and cancelled, and their output and error files read back.

* `POST /v1/files` (multipart: `purpose=batch`, `file` a JSONL of `{custom_id, method, url, body}` lines),
  `GET /v1/files/{id}/content`.
* `POST /v1/batches` (`input_file_id`, `endpoint` `/v1/chat/completions`, `completion_window` `24h`, `metadata`),
  `GET /v1/batches/{id}`, `GET /v1/batches` (newest first), `POST /v1/batches/{id}/cancel`.

A batch is `validating` when created, `in_progress` while polled (its `request_counts.completed` growing), and ends
at the `polls` poll of `GET /v1/batches/{id}` as `BatchSettings.end` says: `completed` (every line answered, each
exactly as `POST /v1/chat/completions` answers its body; a line the chat endpoint refuses, such as an unknown
model, goes to the error file with its status and error), `expired` or `cancelled` (the first `answered` share of
the lines answered, the others in the error file as `batch_expired` / `batch_cancelled`), or `failed` (nothing
answered, the reason in `errors`; also at once, when a line of its file is not a request to the chat endpoint
or a custom_id is missing or repeated, as a provider's validation fails it). Each line answered is on the server's bill as a batch request (`mock_bill`, at
the batch discount). `stats` counts `batches_created`, `batch_lines` (lines answered),
`batch_model:NAME`, `batch_prompt_tokens` and `batch_completion_tokens`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._llm.mock_bill import Bill

End = Literal["completed", "failed", "expired", "cancelled"]
CHAT = "/v1/chat/completions"


class BatchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    polls: int = Field(default=2, ge=1, description="the poll (GET /v1/batches/{id}) at which a batch ends")
    end: End = Field(default="completed", description="how a batch ends")
    answered: float = Field(default=0.5, ge=0, le=1, description="share of lines answered by an expired or "
                                                                   "cancelled batch")


@dataclass
class _Batch:
    id: str
    input_file_id: str
    metadata: dict[str, str]
    created_at: int
    lines: int
    status: str = "validating"
    polls: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0, "failed": 0})

    def json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "batch", "endpoint": CHAT, "errors": self.errors,
                "input_file_id": self.input_file_id, "completion_window": "24h", "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": self.created_at, "request_counts": self.counts, "metadata": self.metadata}


class MockServer(Protocol):
    """What the batch endpoints use of the mock server (`mock_server.MockLLMServer`)."""

    stats: Counter[str]
    bill: Bill

    def answer(self, body: dict[str, Any]) -> Any:
        """A chat completion (with `usage`, `cached` and `completion()`), or (an HTTP status, its error body)."""

    async def _fault(self, request: web.Request) -> web.StreamResponse | None: ...


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


def _invalid(data: bytes) -> str | None:
    """Why an input file is not a batch of chat completions (None: it is one)."""
    ids: set[str] = set()
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            return f"line {n} is not JSON"
        if not isinstance(entry, dict) or entry.get("url") != CHAT or not isinstance(entry.get("body"), dict):
            return f"line {n} is not a request to {CHAT}"
        if not isinstance(entry.get("custom_id"), str) or entry["custom_id"] in ids:
            return f"line {n}: custom_id missing or given twice"
        ids.add(entry["custom_id"])
    return None if ids else "the file has no requests"


class MockBatches:
    """The batch endpoints of one mock server (`register` adds them to its app)."""

    def __init__(self, server: MockServer, settings: BatchSettings | None = None) -> None:
        self.server = server
        self.settings = settings or BatchSettings()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}

    def register(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)
        app.router.add_post("/mock/batch", self._set)

    def _file(self, data: bytes) -> str:
        file_id = f"file-mock-{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    async def _upload(self, request: web.Request) -> web.StreamResponse:
        if (faulted := await self.server._fault(request)) is not None:
            return faulted
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if purpose != "batch" or upload is None or not hasattr(upload, "file"):
            return _error(400, "give purpose=batch and a file")
        data = upload.file.read()
        file_id = self._file(data)
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                                  "filename": getattr(upload, "filename", "batch.jsonl"), "purpose": "batch",
                                  "status": "processed"})

    async def _content(self, request: web.Request) -> web.StreamResponse:
        if (faulted := await self.server._fault(request)) is not None:
            return faulted
        data = self.files.get(request.match_info["id"])
        if data is None:
            return _error(404, f"no file {request.match_info['id']}")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.StreamResponse:
        if (faulted := await self.server._fault(request)) is not None:
            return faulted
        body = await request.json()
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return _error(404, f"no file {file_id}")
        if body.get("endpoint") != CHAT or body.get("completion_window") != "24h":
            return _error(400, f"endpoint must be {CHAT} and completion_window 24h")
        self.server.stats["batches_created"] += 1
        batch = _Batch(f"batch_mock{len(self.batches) + 1}", file_id, dict(body.get("metadata") or {}),
                       len(self.batches), len(self.files[file_id].splitlines()))
        batch.counts["total"] = batch.lines
        self.batches[batch.id] = batch
        problem = _invalid(self.files[file_id])
        if problem is not None:  # as a provider's validation: the batch fails, nothing is answered
            batch.status, batch.errors = "failed", {"object": "list", "data": [
                {"code": "invalid_request", "message": problem, "line": None, "param": None}]}
        return web.json_response(batch.json())

    async def _list(self, request: web.Request) -> web.StreamResponse:
        if (faulted := await self.server._fault(request)) is not None:
            return faulted
        data = [b.json() for b in reversed(self.batches.values())]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def _retrieve(self, request: web.Request) -> web.StreamResponse:
        if (faulted := await self.server._fault(request)) is not None:
            return faulted
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _error(404, f"no batch {request.match_info['id']}")
        if batch.status in ("validating", "in_progress"):
            batch.polls += 1
            if batch.polls >= self.settings.polls:
                self._end(batch, self.settings.end)
            else:
                batch.status = "in_progress"
                batch.counts["completed"] = batch.lines * batch.polls // self.settings.polls
        elif batch.status == "cancelling":
            self._end(batch, "cancelled")
        return web.json_response(batch.json())

    async def _cancel(self, request: web.Request) -> web.StreamResponse:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _error(404, f"no batch {request.match_info['id']}")
        if batch.status in ("validating", "in_progress"):
            batch.status = "cancelling"
        return web.json_response(batch.json())

    async def _set(self, request: web.Request) -> web.Response:
        self.settings = BatchSettings.model_validate(await request.json())
        return web.json_response({"ok": True})

    def _end(self, batch: _Batch, end: End) -> None:
        """Answer the batch's lines as `end` says, and write its output and error files."""
        stats = self.server.stats
        if end == "failed":
            batch.status, batch.errors = "failed", {"object": "list", "data": [
                {"code": "invalid_request", "message": "the batch failed (mock)", "line": None, "param": None}]}
            return
        lines = self.files[batch.input_file_id].decode("utf-8").splitlines()
        answered = len(lines) if end == "completed" else int(len(lines) * self.settings.answered)
        out: list[str] = []
        errors: list[str] = []
        for n, line in enumerate(lines):
            entry = json.loads(line)
            custom_id, body = entry.get("custom_id"), entry.get("body") or {}
            head = {"id": f"batch_req_{batch.id}_{n}", "custom_id": custom_id}
            if n >= answered:
                errors.append(json.dumps({**head, "response": None, "error": {
                    "code": f"batch_{end}", "message": f"the batch {end} before this request was done"}}))
                continue
            answer = self.server.answer(body)
            if isinstance(answer, tuple):
                status, error = answer
                errors.append(json.dumps({**head, "response": {"status_code": status, "request_id": head["id"],
                                                               "body": error}, "error": None}))
                continue
            self.server.bill.add(str(body.get("model", "")), answer.usage["prompt_tokens"],
                                 answer.usage["completion_tokens"], answer.cached, batch=True)
            stats["batch_lines"] += 1
            stats[f"batch_model:{body.get('model', '')}"] += 1
            stats["batch_prompt_tokens"] += answer.usage["prompt_tokens"]
            stats["batch_completion_tokens"] += answer.usage["completion_tokens"]
            out.append(json.dumps({**head, "response": {"status_code": 200, "request_id": head["id"],
                                                        "body": answer.completion()}, "error": None}))
        batch.status = end
        batch.counts = {"total": len(lines), "completed": len(out), "failed": len(errors)}
        if out:
            batch.output_file_id = self._file("\n".join(out).encode("utf-8") + b"\n")
        if errors:
            batch.error_file_id = self._file("\n".join(errors).encode("utf-8") + b"\n")
