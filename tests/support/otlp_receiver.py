#!/usr/bin/env python3
"""A fake OTLP/HTTP JSON log receiver for ahp's end-to-end tests (stdlib only).

usage: otlp_receiver.py PORT FAIL_FIRST IDS_FILE IDLE_SECONDS [RETRY_AFTER]

Listens on 127.0.0.1:PORT (0: any free port) and prints the port on the first
line of stdout. Answers the first FAIL_FIRST POSTs with 503 (with
`Retry-After: RETRY_AFTER`, default 0), the later ones with 200 after checking
the body against the mapping of src/ship/otlp.rs (as its check_export does); an
invalid body gets 400 and its error on stderr. Appends the `ahp.record.id` of
every accepted log record to IDS_FILE, one per line. Exits after IDLE_SECONDS
without a request: 0 if every checked body was valid, 1 otherwise.
"""

import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer

class Invalid(Exception):
    """A body that breaks the mapping."""


def check_any_value(v):
    if not isinstance(v, dict) or len(v) > 1:
        raise Invalid(f"bad AnyValue: {v!r}")
    for kind, inner in v.items():
        ok = {"stringValue": isinstance(inner, str), "bytesValue": isinstance(inner, str),
              "boolValue": isinstance(inner, bool),
              "intValue": isinstance(inner, str) and inner.lstrip("-").isdigit(),
              "doubleValue": isinstance(inner, (int, float)) and not isinstance(inner, bool),
              "arrayValue": isinstance(inner, dict), "kvlistValue": isinstance(inner, dict),
              }.get(kind, False)
        if not ok:
            raise Invalid(f"bad AnyValue field {kind}: {inner!r}")
        if kind == "arrayValue":
            for item in inner.get("values", []):
                check_any_value(item)
        if kind == "kvlistValue":
            key_values(inner.get("values"), "kvlistValue")


def key_values(lst, what):
    if not isinstance(lst, list):
        raise Invalid(f"{what} is not a list")
    out = {}
    for kv in lst:
        key = kv.get("key")
        if not isinstance(key, str) or "value" not in kv or key in out:
            raise Invalid(f"{what}: bad or repeated KeyValue {kv!r}")
        check_any_value(kv["value"])
        out[key] = kv["value"]
    return out


def no_snake_case_keys(v, at="$"):
    if isinstance(v, dict):
        for k, inner in v.items():
            if "_" in k:
                raise Invalid(f"snake_case key {at}.{k}")
            no_snake_case_keys(inner, f"{at}.{k}")
    elif isinstance(v, list):
        for i, item in enumerate(v):
            no_snake_case_keys(item, f"{at}[{i}]")


def check_export(request):
    """The ahp.record.id of every log record, or Invalid."""
    no_snake_case_keys(request)
    ids = []
    resource_logs = request.get("resourceLogs")
    if not resource_logs:
        raise Invalid("no resourceLogs")
    for rl in resource_logs:
        attrs = key_values(rl.get("resource", {}).get("attributes"), "resource.attributes")
        if attrs.get("service.name") != {"stringValue": "ahp"}:
            raise Invalid("resource lacks service.name = ahp")
        for key in ("service.version", "host.name"):
            if "stringValue" not in attrs.get(key, {}):
                raise Invalid(f"resource lacks {key}")
        for sl in rl.get("scopeLogs", []):
            if sl.get("scope", {}).get("name") != "ahp":
                raise Invalid("scope.name is not ahp")
            for lr in sl.get("logRecords", []):
                ids.append(check_log_record(lr))
    return ids


def check_log_record(lr):
    for key in ("timeUnixNano", "observedTimeUnixNano"):
        if not (isinstance(lr.get(key), str) and lr[key].isdigit()):
            raise Invalid(f"{key} is not a decimal string: {lr.get(key)!r}")
    number = lr.get("severityNumber")
    if not (isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= 24):
        raise Invalid(f"severityNumber is not an integer in 1..24: {number!r}")
    if not isinstance(lr.get("severityText"), str) or not str(lr.get("eventName")).startswith("ahp."):
        raise Invalid(f"severityText missing or eventName not ahp.*: {lr!r}")
    attrs = key_values(lr.get("attributes"), "attributes")
    record_id = attrs.get("ahp.record.id", {}).get("stringValue")
    kind = attrs.get("ahp.record.kind", {}).get("stringValue")
    if record_id is None or kind is None:
        raise Invalid("ahp.record.id or ahp.record.kind missing")
    uuid.UUID(record_id)
    body = lr.get("body")
    check_any_value(body)
    fields = key_values((body or {}).get("kvlistValue", {}).get("values"), "body")
    if fields.get("kind") != {"stringValue": kind}:
        raise Invalid(f"body kind {fields.get('kind')!r} is not {kind}")
    return record_id


def main():
    port, fail_first, ids_file, idle = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    retry_after = sys.argv[5] if len(sys.argv) > 5 else "0"
    state = {"posts": 0, "invalid": 0, "idle": False}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state["posts"] += 1
            if state["posts"] <= fail_first:
                return self.reply(503, {"message": "try later"}, {"Retry-After": retry_after})
            try:
                if not self.path.split("?")[0].endswith("/v1/logs"):
                    raise Invalid(f"path {self.path} does not end in /v1/logs")
                if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                    raise Invalid(f"Content-Type is {self.headers.get('Content-Type')!r}")
                ids = check_export(json.loads(body))
            except (Invalid, ValueError, AttributeError, TypeError) as e:
                state["invalid"] += 1
                print(f"otlp_receiver: invalid request: {e}", file=sys.stderr, flush=True)
                return self.reply(400, {"message": str(e)})
            with open(ids_file, "a", encoding="utf-8") as f:
                f.writelines(f"{i}\n" for i in ids)
            self.reply(200, {})

        def reply(self, status, body, headers=None):
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    class Server(HTTPServer):
        timeout = idle

        def handle_timeout(self):
            state["idle"] = True

    server = Server(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)
    while not state["idle"]:
        server.handle_request()
    server.server_close()
    sys.exit(1 if state["invalid"] else 0)


if __name__ == "__main__":
    main()
