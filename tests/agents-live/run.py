#!/usr/bin/env python3
"""The live conformance suite: the agents' own CLIs, with ahp installed
into them as a user installs it, against a scripted fake model.

    python3 tests/agents-live/run.py --ahp target/debug/ahp [--agent NAME] [-k WORD]

Installs the pinned CLIs of package.json and its lock (`npm install
--ignore-scripts`, into this folder's node_modules), then runs every scenario of every agent: a
fresh HOME and git project each, `ahp install AGENT` run there, the agent
driven non-interactively against a fake model API on 127.0.0.1
(fake_model.py) whose script makes the tool calls. A scenario asserts what
happened on disk (a canary file), what the model saw after ahp answered,
and what ahp logged. A failure prints the agent's own output, the requests
the model got and ahp's log. Ends with `N passed, N failed`.

Needs node and npm (for `npm ci`) and git; nothing else beyond Python 3.
"""

import argparse
import concurrent.futures
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fake_model import FakeModel  # noqa: E402

AGENT_TIMEOUT = 120


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def install_clis():
    """`npm ci` of the pinned CLIs, skipped when node_modules matches the lock."""
    stamp = HERE / "node_modules" / ".ahp-lock"
    lock = (HERE / "package-lock.json").read_text()
    if stamp.exists() and stamp.read_text() == lock:
        return
    # `npm install` from the lock rather than `npm ci`: npm refuses `ci`
    # for Qwen Code's optional clipboard packages, whose lock entries it
    # writes without versions. The lock stays as committed (checked).
    subprocess.run(
        ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE, check=True,
    )
    if (HERE / "package-lock.json").read_text() != lock:
        raise SystemExit("npm install changed tests/agents-live/package-lock.json: commit the new lock")
    stamp.write_text(lock)


def native(package_glob, name):
    """The platform's native binary that a wrapper package ships in an
    optional dependency (install scripts are not run)."""
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
    system = {"Linux": "linux", "Darwin": "darwin"}[platform.system()]
    for candidate in sorted((HERE / "node_modules").glob(package_glob.format(os=system, arch=arch))):
        if (candidate / name).is_file():
            return candidate / name
    raise Failure(f"no {name} binary for {system}-{arch} under node_modules ({package_glob})")


class Sandbox:
    """A HOME and a git project for one scenario, with ahp on PATH."""

    def __init__(self, ahp, root):
        self.root = Path(root)
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.ahp = ahp
        self.env = {
            "HOME": str(self.home),
            "PATH": f"{ahp.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "AHP_MANAGED_CONFIG": "",
            "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
            "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
        }
        self.run(["git", "init", "-q", "-b", "main"])
        self.write("README.md", "# demo\n")
        self.run(["git", "add", "-A"])
        self.run(["git", "commit", "-qm", "start"])

    def write(self, rel, text):
        p = self.project / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p

    def run(self, argv, check_ok=True, env=None, timeout=60):
        out = subprocess.run(
            argv, cwd=self.project, env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout,
        )
        if check_ok and out.returncode != 0:
            raise Failure(f"{' '.join(map(str, argv))} exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return out

    def log(self):
        p = self.project / ".ahp" / "signals.jsonl"
        if not p.exists():
            return []
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]

    def runs(self, event):
        return [r for r in self.log() if r.get("kind") == "run" and r.get("event") == event]


# ---- Agents ---------------------------------------------------------------

class Agent:
    """What every agent has: `program` (the argv that starts its CLI),
    whether it asks the user and takes a rewritten input, and the set-up a
    user does once before (`prepare`) and after (`after_install`) `ahp
    install`."""
    can_ask = False
    can_rewrite = True
    prompt_hook = True
    program = []
    label = ""

    def version(self):
        out = subprocess.run(self.program + ["--version"], capture_output=True, text=True,
                             env={**os.environ, "HOME": tempfile.gettempdir()})
        first = (out.stdout.strip().splitlines() or [""])[0]
        return f"{first} {self.label}".strip()

    def prepare(self, sb):
        pass

    def after_install(self, sb):
        pass

    def log(self, sb):
        """The agent's own log, where it keeps what it does not print."""
        return ""


def node_script(path, what):
    """`node PATH` for a CLI shipped as a script."""
    if not path.is_file():
        raise Failure(f"no {what} at {path}")
    return ["node", str(path)]


def login(sb, folder, auth_type):
    """The login a user picks once in an agent's settings (`ahp install`
    adds its hooks to the same file and keeps it)."""
    settings = sb.home / folder / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": auth_type}}}))


class ClaudeCode(Agent):
    name = "claude-code"
    can_ask = True

    def __init__(self):
        self.program = [str(native("@anthropic-ai/claude-code-{os}-{arch}", "claude"))]

    def drive(self, sb, model, prompt):
        # Root cannot bypass permissions; allowing Bash is what a user of
        # `-p` does, and ahp's hook still runs before every call.
        return sb.run(
            self.program + ["-p", prompt, "--output-format", "json", "--allowedTools", "Bash"],
            check_ok=False, timeout=AGENT_TIMEOUT,
            env={
                "ANTHROPIC_BASE_URL": model.url,
                "ANTHROPIC_API_KEY": "sk-ant-fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            },
        )

    def shell(self, command):
        return {"name": "Bash", "input": {"command": command, "description": "run it"}}


class Gemini(Agent):
    name = "gemini"
    label = "(Gemini CLI)"

    def __init__(self):
        self.program = node_script(
            HERE / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js", "Gemini CLI")

    def prepare(self, sb):
        login(sb, ".gemini", "gemini-api-key")
        # Gemini CLI loads a project's hooks only in a folder the user
        # trusted (its trust dialog writes this file); `--skip-trust` trusts
        # the session but still leaves project hooks out (`ahp doctor`
        # says so).
        (sb.home / ".gemini" / "trustedFolders.json").write_text(
            json.dumps({str(sb.project): "TRUST_FOLDER"}))

    def drive(self, sb, model, prompt):
        return sb.run(
            self.program + ["-p", prompt, "--output-format", "json", "--approval-mode", "yolo"],
            check_ok=False, timeout=AGENT_TIMEOUT,
            env={
                "GEMINI_API_KEY": "fake-key",
                "GOOGLE_GEMINI_BASE_URL": model.url,
                "GEMINI_CLI_NO_RELAUNCH": "true",
            },
        )

    def shell(self, command):
        return {"name": "run_shell_command", "input": {"command": command, "description": "run it"}}


class Codex(Agent):
    name = "codex"

    def __init__(self):
        found = sorted((HERE / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"))
        if not found:
            raise Failure("no Codex binary under node_modules/@openai")
        self.program = [str(found[0])]

    def after_install(self, sb):
        # The project trust `ahp install codex` asks for (Codex's startup
        # dialog writes the same lines).
        config = sb.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        with config.open("a") as f:
            f.write(f'[projects."{sb.project}"]\ntrust_level = "trusted"\n')
        # The hook trust a user gives in Codex's hooks review: through
        # Codex's own app-server API, with the digests Codex computes.
        app = subprocess.Popen(self.program + ["app-server"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               cwd=sb.project, env=sb.env)
        try:
            def call(i, method, params):
                app.stdin.write(json.dumps({"id": i, "method": method, "params": params}) + "\n")
                app.stdin.flush()
                while True:
                    line = app.stdout.readline()
                    if not line:
                        raise Failure(f"codex app-server closed during {method}")
                    msg = json.loads(line)
                    if msg.get("id") == i:
                        if "error" in msg:
                            raise Failure(f"codex app-server {method}: {msg['error']}")
                        return msg["result"]
            call(1, "initialize", {"clientInfo": {"name": "ahp-agents-live", "version": "1"}})
            app.stdin.write(json.dumps({"method": "initialized"}) + "\n")
            listed = call(2, "hooks/list", {"cwds": [str(sb.project)]})
            hooks = [h for d in listed["data"] for h in d["hooks"]
                     if "ahp hook codex" in (h.get("command") or "")]
            check(hooks, f"Codex lists none of ahp's hooks: {listed}")
            state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
            call(3, "config/value/write", {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"})
        finally:
            app.terminate()
            app.wait(timeout=10)

    def drive(self, sb, model, prompt):
        provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses", env_key="FAKE_OPENAI_KEY"}}'
        return sb.run(
            self.program + ["exec", "-c", "model_provider=fake", "-c", f"model_providers.fake={provider}",
             "-c", "model=gpt-fake", "-c", "approval_policy=never", "--sandbox", "danger-full-access",
             "--json", prompt],
            check_ok=False, timeout=AGENT_TIMEOUT, env={"FAKE_OPENAI_KEY": "sk-fake"},
        )

    def shell(self, command):
        return {"name": "exec_command", "input": {"cmd": command}}


class Qwen(Agent):
    name = "qwen"
    label = "(Qwen Code)"
    can_ask = True
    can_rewrite = False

    def __init__(self):
        self.program = node_script(
            HERE / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js", "Qwen Code")

    def prepare(self, sb):
        login(sb, ".qwen", "openai")

    def drive(self, sb, model, prompt):
        return sb.run(
            self.program + ["-p", prompt, "--output-format", "json", "--approval-mode", "yolo"],
            check_ok=False, timeout=AGENT_TIMEOUT,
            env={"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": f"{model.url}/v1",
                 "OPENAI_MODEL": "qwen-fake", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"},
        )

    def shell(self, command):
        return {"name": "run_shell_command", "input": {"command": command, "description": "run it"}}


class Copilot(Agent):
    name = "copilot"
    can_ask = True

    def __init__(self):
        self.program = [str(native("@github/copilot-{os}-{arch}", "copilot"))]

    def env(self, sb, model=None):
        # Copilot CLI's own offline mode: a model provider of the user's
        # choosing and no GitHub login, telemetry or update check.
        env = {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
               "COPILOT_MODEL": "gpt-4.1", "COPILOT_PROVIDER_API_KEY": "sk-fake"}
        env["COPILOT_PROVIDER_BASE_URL"] = f"{model.url}/v1" if model else "http://127.0.0.1:9/v1"
        return env

    def after_install(self, sb):
        # Copilot CLI loads a repository's hooks only in a folder the user
        # trusted (its trust dialog writes this list).
        config = sb.home / ".copilot" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"trustedFolders": [str(sb.project)]}))

    def drive(self, sb, model, prompt):
        return sb.run(
            self.program + ["-p", prompt, "--allow-all-tools", "--no-color"],
            check_ok=False, timeout=AGENT_TIMEOUT, env=self.env(sb, model),
        )

    def shell(self, command):
        return {"name": "bash", "input": {"command": command, "description": "run it"}}


class Droid(Agent):
    name = "droid"
    # An `ask` runs unasked under Droid's auto modes: ahp refuses instead.
    can_ask = False
    # UserPromptSubmit does not fire in `droid exec`.
    prompt_hook = False

    def __init__(self):
        self.program = [str(native("@factory/cli-{os}-{arch}", "bin/droid"))]

    def drive(self, sb, model, prompt):
        # Droid's own custom-model setting (BYOK): no Factory login. A model
        # name without "gpt" keeps Droid's Create and Edit tools.
        settings = sb.home / ".factory" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"customModels": [{
            "model": "fake-model", "displayName": "Fake", "baseUrl": f"{model.url}/v1",
            "apiKey": "sk-fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}]}))
        return sb.run(
            self.program + ["exec", "--auto", "high", "-m", "custom:fake-model", prompt],
            check_ok=False, timeout=AGENT_TIMEOUT,
        )

    def log(self, sb):
        p = sb.home / ".factory" / "logs" / "droid-log-single.log"
        return p.read_text()[-3000:] if p.exists() else ""

    def shell(self, command):
        return {"name": "Execute", "input": {"command": command, "summary": "run it",
                                             "riskLevel": "low", "riskLevelReason": "asked"}}


class OpenCode(Agent):
    name = "opencode"
    label = "(OpenCode)"

    def __init__(self):
        self.program = [str(native("opencode-{os}-{arch}", "bin/opencode"))]

    def prepare(self, sb):
        # OpenCode installs its plugin package into every config folder at
        # start (from the registry) unless the folder already has it, as
        # it has after OpenCode's first online start: that state, so the
        # run stays offline.
        version = self.version().split()[0]
        for folder in (sb.home / ".config" / "opencode", sb.project / ".opencode"):
            (folder / "node_modules").mkdir(parents=True, exist_ok=True)
            deps = {"@opencode-ai/plugin": version}
            (folder / "package.json").write_text(json.dumps({"dependencies": deps}))
            (folder / "package-lock.json").write_text(json.dumps(
                {"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}))

    def drive(self, sb, model, prompt):
        # An OpenAI-compatible provider (bundled with OpenCode) at the fake
        # model; a model name without "gpt-" keeps its write and edit tools.
        config = sb.home / ".config" / "opencode" / "opencode.json"
        config.write_text(json.dumps({
            "model": "fake/fake-model", "small_model": "fake/fake-model",
            "autoupdate": False, "share": "disabled",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible", "name": "Fake",
                "options": {"baseURL": f"{model.url}/v1", "apiKey": "sk-fake"},
                "models": {"fake-model": {"name": "Fake", "tool_call": True}}}}}))
        # Through OpenCode's server, as its TUI and SDK clients drive it:
        # `opencode run` exits at the end of the turn, before the message
        # the plugin sends at a blocked stop could start the next one.
        env = {**sb.env, "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
               "OPENCODE_DISABLE_SHARE": "1"}
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            self.program + ["serve", "--hostname", "127.0.0.1", "--port", str(port)],
            cwd=sb.project, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        url = f"http://127.0.0.1:{port}"

        def call(method, path, body=None, timeout=AGENT_TIMEOUT):
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(url + path, method=method, data=data,
                                         headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read() or b"null")

        answer, code = "", 0
        try:
            # The first request can stall while the server boots: probe
            # with a short timeout until one answers.
            for _ in range(150):
                try:
                    call("GET", "/session", timeout=3)
                    break
                except OSError:
                    time.sleep(0.2)
            session = call("POST", "/session", {})
            answer = json.dumps(call("POST", f"/session/{session['id']}/message",
                                     {"parts": [{"type": "text", "text": prompt}]}))
            # A blocked stop sends the next message after this one ended:
            # wait until neither the model nor ahp's log has seen anything
            # new for a while (the log moves at the stop, before the
            # plugin's message reaches the model on a busy machine).
            log = sb.project / ".ahp" / "signals.jsonl"
            seen, quiet = None, 0
            while quiet < 4:
                time.sleep(0.5)
                now = (len(model.requests), log.stat().st_size if log.exists() else 0)
                quiet = quiet + 1 if now == seen else 0
                seen = now
        except (OSError, ValueError) as e:
            answer, code = f"{answer}\n{e}", 1
        finally:
            server.terminate()
            try:
                out, _ = server.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                out, _ = server.communicate()
        return subprocess.CompletedProcess(server.args, code, answer, out)

    def log(self, sb):
        logs = sorted((sb.home / ".local" / "share" / "opencode" / "log").glob("*.log"))
        return logs[-1].read_text()[-3000:] if logs else ""

    def shell(self, command):
        return {"name": "bash", "input": {"command": command, "description": "run it"}}


# The slowest to drive first, so that the side-by-side run ends sooner.
AGENTS = {"opencode": OpenCode, "qwen": Qwen, "droid": Droid, "gemini": Gemini,
          "copilot": Copilot, "claude-code": ClaudeCode, "codex": Codex}


# ---- Scenarios ------------------------------------------------------------
# Each takes (agent, sandbox) and returns after its assertions; a scenario an
# agent cannot run raises Skip with the reason.

class Skip(Exception):
    pass


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


SCENARIOS = []


def drive(agent, sb, script, prompt="do the task"):
    model = FakeModel(script)
    try:
        out = agent.drive(sb, model, prompt)
    finally:
        model.close()
    sb.last = (out, model)
    return out, model


@scenario
def dangerous_shell_call_is_blocked_and_the_model_reads_why(agent, sb):
    sb.write("canary.txt", "keep me\n")
    _, model = drive(agent, sb, [agent.shell("rm -rf canary.txt ~/")])
    check((sb.project / "canary.txt").exists(), "the blocked command ran: canary.txt is gone")
    results = model.tool_results()
    check(results, "the model never got a tool result")
    text = next(iter(results.values()))
    check("[PermissionChecker]" in text and "rm-rf-home" in text,
          f"the model did not read ahp's reason; it got: {text!r}")
    runs = sb.runs("pre-tool-use")
    check(any(r["outcome"] == "block" for r in runs), f"no blocking pre-tool-use run in the log: {runs}")
    check(any(r.get("kind") == "signal" and r["header"]["intensity"] == "block" for r in sb.log()),
          "no block signal in the log")


@scenario
def benign_shell_call_runs(agent, sb):
    _, model = drive(agent, sb, [agent.shell("echo made > made.txt")])
    check((sb.project / "made.txt").exists(), "the allowed command did not run")
    check(any(r["outcome"] == "accept" for r in sb.runs("pre-tool-use")), "no accepted run logged")


@scenario
def an_ask_reaches_the_confirmation_path_or_its_fallback(agent, sb):
    sb.write("work.txt", "one\n")
    sb.run(["git", "add", "work.txt"])
    sb.run(["git", "commit", "-qm", "work"])
    sb.write("work.txt", "uncommitted work\n")
    if not agent.can_ask:
        # The documented fallback of an agent that cannot ask: the prompt
        # goes to the model as context, or, with prompt_fallback: deny,
        # the call is refused. The refusal is what is checked here.
        sb.write(".ahp/hooks.yaml", "settings:\n  prompt_fallback: deny\n")
    _, model = drive(agent, sb, [agent.shell("git reset --hard")])
    check((sb.project / "work.txt").read_text() == "uncommitted work\n",
          "the command that needed confirmation ran without it")
    text = " ".join(model.tool_results().values())
    check("git-reset-hard" in text, f"the model did not read the confirmation reason: {text!r}")


@scenario
def an_ask_of_an_agent_that_cannot_ask_reaches_the_model(agent, sb):
    if agent.can_ask:
        raise Skip("this agent asks the user itself (the scenario above)")
    # The default fallback: as context where the answer carries context to
    # the model, as a refusal where it cannot (Gemini CLI's BeforeTool).
    _, model = drive(agent, sb, [agent.shell("git push --force origin main")])
    seen = json.dumps([r["body"] for r in model.conversation()[1:]])
    check("git-force-push" in seen or "force" in seen and "PermissionChecker" in seen,
          "the prompt's reason did not reach the model")


@scenario
def a_control_rewrite_is_what_runs_or_its_fallback(agent, sb):
    sb.write(".ahp/hooks.yaml", """hooks:
  pre-tool-use:
    - oracle: Rules
      id: rewrite
      config:
        rules:
          - condition: "tool.input.command ~ 'original'"
            intensity: control
            message: "the rewritten command runs"
            modifications:
              - {target: tool.input.command, op: set, value: "echo rewritten > out.txt"}
""")
    sb.run(["ahp", "trust"])
    _, model = drive(agent, sb, [agent.shell("echo original > out.txt")])
    out = sb.project / "out.txt"
    if agent.can_rewrite:
        check(out.exists(), "neither command ran")
        check(out.read_text().strip() == "rewritten", f"out.txt holds {out.read_text()!r}: the original ran")
    else:
        # The documented fallback where the agent takes no rewritten input:
        # refused, with the change to make.
        check(not out.exists(), "the original command ran although it had to be rewritten")
        text = " ".join(model.tool_results().values())
        check("rewrite required" in text, f"the model did not read the change to make: {text!r}")


@scenario
def a_blocked_stop_continues_with_the_reason_until_the_guard_releases(agent, sb):
    sb.write(".ahp/hooks.yaml", """settings:
  stop_block_cap: 2
hooks:
  pre-agent-turn-stop:
    - oracle: Rules
      id: not-yet
      config:
        rules:
          - condition: "true"
            intensity: block
            message: "STOP-CANARY run the tests first"
""")
    _, model = drive(agent, sb, [])
    turns = model.conversation()
    check(len(turns) >= 2, f"the agent stopped at once ({len(turns)} turn)")
    check("STOP-CANARY" in json.dumps(turns[1]["body"]), "the model did not read why it could not stop")
    check(len(turns) <= 4, f"the stop-loop guard did not release the agent ({len(turns)} turns)")
    check(any(r.get("kind") == "release" for r in sb.log()), "no release record in the log")


@scenario
def session_and_prompt_context_reach_the_model(agent, sb):
    sb.write(".ahp/hooks.yaml", """hooks:
  pre-session:
    - oracle: Rules
      id: hello
      config: {rules: [{condition: "true", intensity: aid, message: "SESSION-CANARY ahp is on"}]}
  pre-agent-turn:
    - oracle: Rules
      id: mind
      config: {rules: [{condition: "true", intensity: aid, message: "PROMPT-CANARY mind the checklist"}]}
""")
    _, model = drive(agent, sb, [])
    turns = model.conversation()
    check(turns, "the model got no request")
    first = json.dumps(turns[0]["body"])
    check("SESSION-CANARY" in first, "the session-start context did not reach the model")
    if not agent.prompt_hook:
        raise Skip("the session context reached the model; this agent runs no prompt hook "
                   "when driven non-interactively")
    check("PROMPT-CANARY" in first, "the prompt-submit context did not reach the model")


# ---- Runner ---------------------------------------------------------------

def report(out, agent, sb, error):
    out(f"    {error}")
    last = getattr(sb, "last", None)
    if last:
        done, model = last
        out(f"    --- {agent.name} exit {done.returncode}; stdout:\n{done.stdout[-4000:]}")
        out(f"    --- stderr:\n{done.stderr[-4000:]}")
        for r in model.requests[-4:]:
            out(f"    --- request {r['path']}: {json.dumps(r['body'])[-1500:]}")
    own = agent.log(sb)
    if own:
        out(f"    --- {agent.name}'s own log:\n{own}")
    for record in sb.log()[-6:]:
        out(f"    --- log: {json.dumps(record)[:800]}")


def run_agent(name, cls, ahp, only):
    """Every scenario of one agent; returns (lines, passed, failed, skipped)."""
    lines = []
    out = lines.append
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        agent = cls()
    except Failure as e:
        # A CLI pinned for other platforms only (Droid ships linux-x64 here).
        return [f"{name}: skipped, {e}"], 0, 0, 1
    out(f"{name} {agent.version()}")
    for fn in SCENARIOS:
        if only and only not in fn.__name__:
            continue
        with tempfile.TemporaryDirectory(prefix="ahp-live-") as tmp:
            sb = Sandbox(ahp, tmp)
            agent.prepare(sb)
            done = sb.run(["ahp", "install", name], check_ok=False)
            t0 = time.monotonic()
            try:
                if done.returncode != 0:
                    raise Failure(f"ahp install {name} failed:\n{done.stdout}{done.stderr}")
                agent.after_install(sb)
                fn(agent, sb)
                counts["passed"] += 1
                out(f"  ok    {fn.__name__} ({time.monotonic() - t0:.1f} s)")
            except Skip as e:
                counts["skipped"] += 1
                out(f"  skip  {fn.__name__}: {e}")
            except Failure as e:
                counts["failed"] += 1
                out(f"  FAIL  {fn.__name__}")
                report(out, agent, sb, e)
            except Exception:
                counts["failed"] += 1
                out(f"  FAIL  {fn.__name__}")
                report(out, agent, sb, traceback.format_exc())
    return lines, counts["passed"], counts["failed"], counts["skipped"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ahp", type=Path, help="the ahp binary to install (required to run)")
    ap.add_argument("--install-only", action="store_true",
                    help="only install the pinned CLIs (CI does it beside the build)")
    ap.add_argument("--agent", action="append", help="only this agent (repeatable)")
    ap.add_argument("-k", help="only scenarios whose name contains this")
    ap.add_argument("-j", type=int, default=3,
                    help="agents driven at once (default 3: the CLIs mostly wait on each other)")
    args = ap.parse_args()
    if not shutil.which("npm"):
        sys.exit("the live suite needs node and npm")
    if args.install_only:
        install_clis()
        return
    if args.ahp is None:
        ap.error("--ahp is required")
    ahp = args.ahp.resolve()
    if not ahp.is_file():
        sys.exit(f"no ahp binary at {ahp}")
    install_clis()
    started = time.monotonic()
    chosen = [(n, c) for n, c in AGENTS.items() if not args.agent or n in args.agent]
    totals = [0, 0, 0]
    # Each agent runs its scenarios in order in its own sandboxes; agents
    # run side by side, and each one's report is printed whole.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futures = [pool.submit(run_agent, n, c, ahp, args.k) for n, c in chosen]
        for f in futures:
            lines, *counts = f.result()
            print("\n".join(lines), flush=True)
            totals = [a + b for a, b in zip(totals, counts)]
    passed, failed, skipped = totals
    print(f"agents-live: {time.monotonic() - started:.0f} s")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
