"""Drive a real `nanohermes acp` with the official TypeScript ACP client (@agentclientprotocol/sdk),
which checks every message it receives against its own types: two threads prompting at once, a
read, a write and a command with their questions, slash commands, the model option, a mode, list,
load, an unknown session (-32002) and close. Prints what the client saw and its problems (none
expected).

    npm install --prefix /tmp/acp-ts @agentclientprotocol/sdk   # once
    .venv/bin/python scripts/acp_ts_client.py /tmp/acp-ts
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.scripted_server import ScriptedServer, call, serving, text  # noqa: E402

CLIENT = r"""
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as fs from "node:fs";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
const [env, ws] = [JSON.parse(process.argv[2]), process.argv[3]];
const agent = spawn(process.argv[4], ["-m", "nanohermes", "acp"], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "inherit"] });
const problems = [], seen = {};
process.on("unhandledRejection", (e) => problems.push("unhandled: " + e));
const count = (k) => { seen[k] = (seen[k] || 0) + 1; };
const app = client({ name: "ts-check" })
  .onRequest("session/request_permission", async ({ params }) => { count("permission"); return { outcome: { outcome: "selected", optionId: "allow" } }; })
  .onRequest("fs/read_text_file", async ({ params }) => { count("fs/read"); return { content: fs.readFileSync(params.path, "utf8") }; })
  .onRequest("fs/write_text_file", async ({ params }) => { count("fs/write"); fs.writeFileSync(params.path, params.content); return {}; })
  .onNotification("session/update", ({ params }) => count(params.update.sessionUpdate));
try {
  await app.connectWith(ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)), async (ctx) => {
    await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
    const [a, b] = [await ctx.request("session/new", { cwd: ws, mcpServers: [] }), await ctx.request("session/new", { cwd: ws, mcpServers: [] })];
    const say = (s, t) => ctx.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: t }] });
    await Promise.all([say(a, "hello"), say(b, "hello")]);
    for (const t of ["read the notes", "write the notes", "run it", "/context", "/diff", "/undo"]) {
      if ((await say(a, t)).stopReason !== "end_turn") problems.push(t);
    }
    await ctx.request("session/set_config_option", { sessionId: a.sessionId, configId: "model", value: "other-model" });
    await ctx.request("session/set_mode", { sessionId: a.sessionId, modeId: "plan" });
    await ctx.request("session/list", { cwd: ws });
    await ctx.request("session/load", { sessionId: a.sessionId, cwd: ws, mcpServers: [] });
    try { await say({ sessionId: "nope" }, "x"); problems.push("an unknown session answered"); }
    catch (e) { if (e.code !== -32002) problems.push("unknown session: code " + e.code); }
    for (const s of [a, b]) await ctx.request("session/close", { sessionId: s.sessionId });
  });
} catch (e) { problems.push("failed: " + (e.stack || e)); }
agent.stdin.end();
console.log(JSON.stringify({ seen, problems }));
process.exit(problems.length ? 1 : 0);
"""


def reply(body: dict):
    last = body["messages"][-1]
    said = str(last.get("content"))
    if last["role"] == "tool":
        return text("Done.")
    for word, answer in (
        ("write", call("write_file", {"path": "notes.txt", "content": "the secret is 43\n"})),
        ("run", call("run_command", {"command": "echo ran", "unsandboxed": True, "reason": "a check"})),
        ("read", call("read_file", {"path": "notes.txt"})),
    ):
        if word in said:
            return answer
    return text("Hello there, from a scripted model.", delay=0.02, chunk_size=3)


def main(node_modules: str) -> int:
    server = serving(ScriptedServer(), ["test-model", "other-model"])
    server.handler = reply
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "notes.txt").write_text("the secret is 42\n")
        script = Path(node_modules) / "acp_check.mjs"
        script.write_text(CLIENT)
        env = {
            "NANOHERMES_HOME": str(Path(tmp) / "home"),
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": server.url,
            "NANOHERMES_MODEL": "test-model",
            "PYTHONPATH": str(REPO),
        }
        run = subprocess.run(["node", str(script), json.dumps(env), str(ws), sys.executable], cwd=node_modules)
    server.close()
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")))
