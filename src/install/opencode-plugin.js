// ahp for OpenCode: every tool call, prompt and turn end of this OpenCode
// goes through `ahp hook opencode`, which answers as it answers Claude Code.
// Written by `ahp install opencode`; `ahp uninstall opencode` removes it.
// ahp-plugin: 1
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

const COMMAND = "__AHP_COMMAND__";

// One call of ahp, through the shell as other agents run their hooks: the
// event on stdin, the answer read back. A tool call ahp cannot judge is not
// let through (see `tool.execute.before`).
function ahp(payload, directory) {
  const run = spawnSync(COMMAND, {
    shell: true,
    cwd: directory,
    input: JSON.stringify(payload),
    encoding: "utf8",
    timeout: 600000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const stderr = (run.stderr || "").trim();
  if (run.error) return { failed: `could not run \`${COMMAND}\`: ${run.error.message}` };
  if (run.status === 2) return { deny: stderr || "blocked by ahp" };
  if (run.status !== 0) return { failed: `\`${COMMAND}\` exited ${run.status}: ${stderr}` };
  const text = (run.stdout || "").trim();
  if (!text) return {};
  let out;
  try {
    out = JSON.parse(text);
  } catch {
    return { failed: `\`${COMMAND}\` answered with text that is not JSON: ${text.slice(0, 200)}` };
  }
  if (!out || typeof out !== "object") {
    return { failed: `\`${COMMAND}\` answered with JSON that is not an object: ${text.slice(0, 200)}` };
  }
  const hook = out.hookSpecificOutput || {};
  const answer = {};
  // Anything but a plain allow (an "ask" this plugin cannot put to the
  // user, a value it does not know) stops the call.
  const decision = hook.permissionDecision;
  if (decision !== undefined && decision !== "allow") {
    answer.deny = hook.permissionDecisionReason || `ahp answered ${JSON.stringify(decision)}`;
  }
  if (out.decision === "block") answer.deny = out.reason || "blocked by ahp";
  if (hook.updatedInput && typeof hook.updatedInput === "object") answer.input = hook.updatedInput;
  const context = [out.systemMessage, hook.additionalContext].filter(Boolean).join("\n\n");
  if (context) answer.context = context;
  return answer;
}

export const AhpPolicy = async ({ client, directory }) => {
  const started = new Set(); // sessions whose start ahp has seen
  const continued = new Set(); // sessions ahp is sending back to work
  const resumed = new Set(); // sessions working on ahp's message (its stop is a repeat)
  const pending = new Map(); // tool call id -> context for the model
  const event = (sessionID, name, fields) => ({
    session_id: sessionID,
    cwd: directory,
    hook_event_name: name,
    ...fields,
  });
  return {
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      const texts = (output.parts || []).filter((p) => p.type === "text");
      const part = texts[0];
      const notes = [];
      if (!started.has(sessionID)) {
        started.add(sessionID);
        const start = ahp(event(sessionID, "SessionStart", { source: "startup" }), directory);
        if (start.failed) console.error(`ahp: ${start.failed}`);
        if (start.context) notes.push(start.context);
      }
      // The message ahp itself sent at a blocked stop is no new user turn.
      if (continued.has(sessionID)) {
        continued.delete(sessionID);
        resumed.add(sessionID);
      } else {
        resumed.delete(sessionID);
        const prompt = texts.map((p) => p.text).join("\n\n");
        const turn = ahp(event(sessionID, "UserPromptSubmit", { prompt }), directory);
        if (turn.deny) throw new Error(turn.deny);
        if (turn.failed) console.error(`ahp: ${turn.failed}`);
        if (turn.context) notes.push(turn.context);
      }
      if (notes.length && part) part.text = `${part.text}\n\n${notes.join("\n\n")}`;
    },
    "tool.execute.before": async (input, output) => {
      const fields = { tool_name: input.tool, tool_input: output.args, tool_use_id: input.callID };
      // A shell command is judged in the directory it runs in.
      const workdir = output.args && typeof output.args.workdir === "string" ? output.args.workdir : "";
      if (workdir) fields.cwd = resolve(directory, workdir);
      const answer = ahp(event(input.sessionID, "PreToolUse", fields), directory);
      if (answer.failed) throw new Error(`ahp could not judge this call: ${answer.failed}`);
      if (answer.deny) throw new Error(answer.deny);
      if (answer.input) {
        // OpenCode runs the object it handed over: it is changed in place.
        for (const key of Object.keys(output.args)) delete output.args[key];
        Object.assign(output.args, answer.input);
      }
      if (answer.context) pending.set(input.callID, answer.context);
    },
    "tool.execute.after": async (input, output) => {
      const answer = ahp(
        event(input.sessionID, "PostToolUse", {
          tool_name: input.tool,
          tool_input: input.args,
          tool_use_id: input.callID,
          tool_response: output.output,
        }),
        directory,
      );
      if (answer.failed) console.error(`ahp: ${answer.failed}`);
      const notes = [pending.get(input.callID), answer.deny, answer.context].filter(Boolean);
      pending.delete(input.callID);
      if (notes.length && typeof output.output === "string") {
        output.output = `${output.output}\n\n${notes.join("\n\n")}`;
      }
    },
    event: async ({ event: e }) => {
      if (e.type !== "session.idle") return;
      const sessionID = e.properties && e.properties.sessionID;
      if (!sessionID) return;
      const active = resumed.delete(sessionID);
      const stop = ahp(event(sessionID, "Stop", { stop_hook_active: active }), directory);
      if (stop.failed) console.error(`ahp: ${stop.failed}`);
      if (stop.deny) {
        continued.add(sessionID);
        try {
          await client.session.prompt({
            path: { id: sessionID },
            body: { parts: [{ type: "text", text: stop.deny }] },
          });
        } catch (err) {
          continued.delete(sessionID);
          console.error(`ahp: could not send the agent back to work: ${err}`);
        }
      }
    },
  };
};
