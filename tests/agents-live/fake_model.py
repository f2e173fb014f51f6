"""A scripted fake model API on 127.0.0.1, for driving agent CLIs offline.

The model "says" the tool calls of its script, one per conversation turn
that offers tools, then ends its turn with a short text. Every request is
recorded, so a test can assert what the model saw after ahp answered (the
tool result of a denied call, the context of a hook).

Speaks Anthropic's Messages API (`POST /v1/messages`, streamed as server
sent events) and Gemini's (`POST /v1beta/models/M:streamGenerateContent`,
streamed, and `:generateContent`). Any other path gets `{}`, so that side
requests of a CLI (token counting, feature flags) never fail a run.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fill(schema):
    """The smallest value of a JSON schema (OpenAPI or JSON Schema types)."""
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: fill(v) for k, v in props.items()}
    return {"string": "user", "integer": 1, "number": 1, "boolean": False, "array": []}.get(kind)


class FakeModel:
    """A server on an ephemeral port of 127.0.0.1, stopped by `close()`."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        self._turn = 0
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _json(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._json({})

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append({"path": self.path, "body": body})
                path = self.path.split("?")[0]
                if path == "/v1/messages":
                    self._anthropic(body)
                elif path.endswith("/responses"):
                    self._responses(body)
                elif path.endswith("/chat/completions"):
                    self._chat(body)
                elif path.endswith(":streamGenerateContent"):
                    self._gemini(body, stream=True)
                elif path.endswith(":generateContent"):
                    self._gemini(body, stream=False)
                elif path.endswith(":countTokens"):
                    self._json({"totalTokens": 1})
                else:
                    self._json({"input_tokens": 1})

            def _chat(self, body):
                step = model._next(bool(body.get("tools")))
                cid = f"chatcmpl-{len(model.requests)}"
                if step:
                    delta = {"role": "assistant", "content": None, "tool_calls": [{
                        "index": 0, "id": step["id"], "type": "function",
                        "function": {"name": step["name"], "arguments": json.dumps(step["input"])}}]}
                    finish = "tool_calls"
                else:
                    delta = {"role": "assistant", "content": "done"}
                    finish = "stop"
                chunks = [
                    {"id": cid, "object": "chat.completion.chunk", "model": "fake",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {"id": cid, "object": "chat.completion.chunk", "model": "fake",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
                ]
                if not body.get("stream"):
                    message = dict(delta)
                    self._json({"id": cid, "object": "chat.completion", "model": "fake",
                                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for c in chunks:
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _responses(self, body):
                step = model._next(bool(body.get("tools")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                rid = f"resp_{len(model.requests)}"

                def event(name, data):
                    data["type"] = name
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

                event("response.created", {"response": {"id": rid, "object": "response",
                                                        "status": "in_progress", "output": []}})
                if step:
                    item = {"type": "function_call", "id": f"fc_{step['id']}", "call_id": step["id"],
                            "name": step["name"], "arguments": json.dumps(step["input"]),
                            "status": "completed"}
                else:
                    item = {"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": "done", "annotations": []}]}
                event("response.output_item.added", {"output_index": 0, "item": item})
                event("response.output_item.done", {"output_index": 0, "item": item})
                event("response.completed", {"response": {
                    "id": rid, "object": "response", "status": "completed", "output": [item],
                    "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens_details": {"reasoning_tokens": 0}}}})
                self.wfile.flush()
                self.close_connection = True

            def _gemini(self, body, stream):
                step = model._next(bool(body.get("tools")))
                schema = (body.get("generationConfig") or {}).get("responseJsonSchema") \
                    or (body.get("generationConfig") or {}).get("responseSchema")
                if step:
                    part = {"functionCall": {"name": step["name"], "args": step["input"], "id": step["id"]}}
                elif schema:
                    # The CLI's own side questions (routing, next speaker)
                    # want JSON of a schema: the smallest answer that fits.
                    part = {"text": json.dumps(fill(schema))}
                else:
                    part = {"text": "done"}
                chunk = {
                    "candidates": [{"content": {"role": "model", "parts": [part]},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                      "totalTokenCount": 2},
                    "modelVersion": "fake",
                }
                if not stream:
                    self._json(chunk)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                self.wfile.flush()
                self.close_connection = True

            def _anthropic(self, body):
                step = model._next(bool(body.get("tools")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()

                def event(name, data):
                    data["type"] = name
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

                event("message_start", {"message": {
                    "id": f"msg_{len(model.requests)}", "type": "message", "role": "assistant",
                    "model": body.get("model", "fake"), "content": [], "stop_reason": None,
                    "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})
                if step:
                    event("content_block_start", {"index": 0, "content_block": {
                        "type": "tool_use", "id": step["id"], "name": step["name"], "input": {}}})
                    event("content_block_delta", {"index": 0, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(step["input"])}})
                    stop = "tool_use"
                else:
                    event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
                    event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "done"}})
                    stop = "end_turn"
                event("content_block_stop", {"index": 0})
                event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                        "usage": {"output_tokens": 1}})
                event("message_stop", {})
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _next(self, offers_tools):
        """The next tool call of the script, or None to end the turn.
        Requests without tools (titles, summaries) never consume one."""
        with self._lock:
            if not offers_tools or self._turn >= len(self.script):
                return None
            step = dict(self.script[self._turn])
            self._turn += 1
            step.setdefault("id", f"toolu_{self._turn:02d}")
            return step

    def conversation(self):
        """The requests that offered tools: the agent's main conversation."""
        return [r for r in self.requests if r["body"].get("tools")]

    def tool_results(self):
        """What the agent sent back for each tool call, as text, by call id
        (Anthropic `tool_result` blocks, Gemini `functionResponse` parts)."""
        out = {}
        for r in self.conversation():
            body = r["body"]
            for m in body.get("messages", []):
                content = m.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        c = block.get("content")
                        text = "\n".join(x.get("text", "") for x in c if isinstance(x, dict)) \
                            if isinstance(c, list) else str(c)
                        out[block.get("tool_use_id")] = text
            for m in body.get("messages", []):
                if isinstance(m, dict) and m.get("role") == "tool":
                    c = m.get("content")
                    out[m.get("tool_call_id")] = c if isinstance(c, str) else json.dumps(c)
            for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    output = item.get("output")
                    out[item.get("call_id")] = output if isinstance(output, str) else json.dumps(output)
            for m in body.get("contents", []):
                for part in m.get("parts", []):
                    fr = part.get("functionResponse") if isinstance(part, dict) else None
                    if fr:
                        out[fr.get("id") or fr.get("name")] = json.dumps(fr.get("response"))
        return out

    def close(self):
        self._server.shutdown()
        self._server.server_close()
