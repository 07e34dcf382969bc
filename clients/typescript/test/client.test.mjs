// The client against `regista serve` and the fake providers on 127.0.0.1 (tests/fakes/launch.py):
// a run recorded through regista, replayed strictly, forked in signal mode going live.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { RegistaError, ReplaySession, TapeMismatch, playTape } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const python = process.env.REGISTA_PYTHON || path.join(root, ".venv/bin/python");
const KEY = "sk-test-key-never-written";
const PROMPT = "What's the weather in Paris?";
const store = mkdtempSync(path.join(tmpdir(), "regista-ts-"));
let launcher;
let urls;

before(async () => {
  launcher = spawn(python, [path.join(root, "tests/fakes/launch.py"), "--serve", store], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = await new Promise((resolve, reject) => {
    launcher.once("error", reject);
    launcher.once("exit", (code) => reject(new Error(`the launcher exited with ${code}`)));
    createInterface({ input: launcher.stdout }).once("line", resolve);
  });
  urls = JSON.parse(line);
});

after(() => {
  launcher?.stdin.end(); // it stops when its input closes
});

const TOOL = {
  name: "get_weather",
  description: "Current weather for a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

async function anthropicAgent(client, prompt = PROMPT) {
  const messages = [{ role: "user", content: prompt }];
  for (;;) {
    const reply = await client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 64, tools: [TOOL], messages });
    messages.push({ role: "assistant", content: reply.content });
    const calls = reply.content.filter((b) => b.type === "tool_use");
    if (calls.length === 0) return reply.content.map((b) => b.text).join("");
    messages.push({
      role: "user",
      content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: `sunny in ${c.input.city}` })),
    });
  }
}

/** The same loop on the SDKs' stream helpers (Server-Sent Events, both ways). */
async function anthropicStreamAgent(client, prompt = PROMPT) {
  const messages = [{ role: "user", content: prompt }];
  for (;;) {
    const params = { model: "claude-sonnet-4-6", max_tokens: 64, tools: [TOOL], messages };
    const reply = await client.messages.stream(params).finalMessage();
    messages.push({ role: "assistant", content: reply.content });
    const calls = reply.content.filter((b) => b.type === "tool_use");
    if (calls.length === 0) return reply.content.map((b) => b.text).join("");
    messages.push({
      role: "user",
      content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: `sunny in ${c.input.city}` })),
    });
  }
}

async function openaiStreamAgent(client, prompt = PROMPT) {
  const tools = [{ type: "function", function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.input_schema } }];
  const messages = [{ role: "user", content: prompt }];
  for (;;) {
    const stream = client.chat.completions.stream({ model: "gpt-4o-mini", tools, messages });
    const reply = await stream.finalChatCompletion();
    const message = reply.choices[0].message;
    messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const { city } = JSON.parse(call.function.arguments);
      messages.push({ role: "tool", tool_call_id: call.id, content: `sunny in ${city}` });
    }
  }
}

async function openaiAgent(client, prompt = PROMPT) {
  const tools = [{ type: "function", function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.input_schema } }];
  const messages = [{ role: "user", content: prompt }];
  for (;;) {
    const reply = await client.chat.completions.create({ model: "gpt-4o-mini", tools, messages });
    const message = reply.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const { city } = JSON.parse(call.function.arguments);
      messages.push({ role: "tool", tool_call_id: call.id, content: `sunny in ${city}` });
    }
  }
}

/** Record one run through regista's recording proxy; answers its run id. */
async function record(kind) {
  const before = new Set(readdirSync(store));
  if (kind === "anthropic") {
    await anthropicAgent(new Anthropic({ apiKey: KEY, baseURL: `${urls.regista}/v1/record/anthropic` }));
  } else {
    await openaiAgent(new OpenAI({ apiKey: KEY, baseURL: `${urls.regista}/v1/record/openai` }));
  }
  const made = readdirSync(store).filter((f) => !before.has(f));
  assert.equal(made.length, 1, `one trace recorded, not ${made}`);
  return made[0].replace(/\.jsonl$/, "");
}

for (const kind of ["anthropic", "openai"]) {
  const agent = kind === "anthropic" ? anthropicAgent : openaiAgent;
  const real = () =>
    kind === "anthropic"
      ? new Anthropic({ apiKey: KEY, baseURL: urls.anthropic })
      : new OpenAI({ apiKey: KEY, baseURL: urls.openai });

  test(`${kind}: a recorded run replays strictly through a wrapped client`, async () => {
    const run = await record(kind);
    const rs = await ReplaySession.create(urls.regista, { run });
    assert.match(rs.anthropicBaseURL, /\/v1\/replays\/rp_\w+\/anthropic$/);
    assert.match(rs.openaiBaseURL, /\/v1\/replays\/rp_\w+\/openai\/v1$/);
    assert.equal(await agent(rs.wrap(real())), "The weather: sunny in Paris");
    const status = await rs.status();
    assert.equal(status.matched, 2);
    assert.equal(status.tape_failure, null);
    assert.equal(rs.live, false);
    const closed = await rs.close();
    assert.deepEqual(closed.runs, []); // a plain replay writes no run
  });

  test(`${kind}: a fork in signal mode goes live, recorded through regista, linked to its parent`, async () => {
    const run = await record(kind);
    const rs = await ReplaySession.create(urls.regista, {
      run,
      edits: [{ step: 1, tool_result: "rainy in Paris, 12°C" }],
    });
    assert.ok(rs.anthropicLiveURL && rs.openaiLiveURL, "a signal fork has live URLs");
    // the agent's own tool says "sunny": the edit is what the live model sees
    const answer = await agent(rs.wrap(real()));
    assert.equal(answer, "The weather: rainy in Paris, 12°C");
    assert.equal(rs.live, true, "the 409 replay_live switched the client to the live URLs");
    const status = await rs.status();
    assert.equal(status.live_calls, 1);
    assert.equal(status.runs.length, 1);
    const { parent, runs } = await rs.close();
    assert.equal(parent, run);
    assert.equal(runs.length, 1);
    const fork = runs[0];
    assert.equal(fork.forked_from.session_id, run);
    assert.equal(fork.forked_from.at_step, 1);
    assert.equal(fork.outcome, "end_turn");
    assert.equal(fork.steps, 3);
    assert.ok(typeof fork.cost_usd === "number" || fork.cost_usd === null);
    const written = readFileSync(path.join(store, `${fork.session_id}.jsonl`), "utf8");
    assert.ok(written.includes('"session.end"'), "deleting the replay ended the fork's trace");
    assert.ok(!written.includes(KEY), "the API key never reaches a trace");
  });

  test(`${kind}: a fork with another model sends its live calls asking for it`, async () => {
    const run = await record(kind);
    const model = kind === "anthropic" ? "claude-opus-4-1" : "gpt-4.1";
    const rs = await ReplaySession.create(urls.regista, { run, liveAfter: 0, model });
    assert.equal(await agent(rs.wrap(real())), "The weather: sunny in Paris");
    assert.equal(rs.live, true);
    const { runs } = await rs.close();
    assert.equal(runs.length, 1);
    assert.equal(runs[0].forked_from.model, model);
    // the recorded step 0 as it was asked; the live call as it was sent: with the model
    const written = readFileSync(path.join(store, `${runs[0].session_id}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const asked = written.filter((e) => e.type === "llm.request").map((e) => e.model);
    assert.equal(asked.length, 2);
    assert.notEqual(asked[0], model);
    assert.equal(asked[1], model);
  });

  test(`${kind}: a tape test fails with the step and the field`, async () => {
    const run = await record(kind);
    const tape = path.join(store, `${run}.jsonl`);
    // made inside the body: the SDK reads the replay's base URL from the environment
    const fromEnv = () => (kind === "anthropic" ? new Anthropic() : new OpenAI());
    await playTape(tape, () => agent(fromEnv()), { url: urls.regista });
    await assert.rejects(
      playTape(tape, () => agent(fromEnv(), "What's the weather in Lyon?"), { url: urls.regista }),
      (err) => {
        assert.ok(err instanceof TapeMismatch);
        assert.match(err.message, /^\S+\.jsonl: diverged at step 0 \(model call\): messages\[0\]/);
        assert.match(err.message, /recorded "What's the weather in Paris\?" != live "What's the weather in Lyon\?"/);
        return true;
      },
    );
  });
}

for (const [kind, agent] of [["anthropic", anthropicStreamAgent], ["openai", openaiStreamAgent]]) {
  test(`${kind}: a streamed fork goes live the same way`, async () => {
    const run = await record(kind);
    const rs = await ReplaySession.create(urls.regista, { run, edits: [{ step: 1, tool_result: "foggy" }] });
    const real = kind === "anthropic" ? new Anthropic({ apiKey: KEY, baseURL: urls.anthropic }) : new OpenAI({ apiKey: KEY, baseURL: urls.openai });
    assert.equal(await agent(rs.wrap(real)), "The weather: foggy");
    assert.equal(rs.live, true);
    const { runs } = await rs.close();
    assert.equal(runs[0].steps, 3);
    assert.equal(runs[0].outcome, "end_turn");
  });
}

test("a fork's model is a name: an empty one is refused before anything is sent", async () => {
  await assert.rejects(
    ReplaySession.create("http://127.0.0.1:9", { run: "01J", liveAfter: 0, model: " " }),
    (err) => err instanceof RegistaError && /model/.test(err.message),
  );
});

test("a replay of no such run says so, in the server's words", async () => {
  await assert.rejects(ReplaySession.create(urls.regista, { run: "01NOSUCHRUN" }), (err) => {
    assert.ok(err instanceof RegistaError);
    assert.match(err.message, /no run '01NOSUCHRUN' in the store/);
    return true;
  });
});

test("a wrapped client's own fetch still makes the requests", async () => {
  const run = await record("anthropic");
  const rs = await ReplaySession.create(urls.regista, { run, edits: [{ step: 1, tool_result: "hail" }] });
  const seen = [];
  const own = (url, init) => {
    seen.push(String(url));
    return fetch(url, init);
  };
  const client = rs.wrap(new Anthropic({ apiKey: KEY, baseURL: urls.anthropic, fetch: own }));
  assert.equal(await anthropicAgent(client), "The weather: hail");
  assert.equal(seen.length, 3); // step 0 served; step 2 answered 409, then sent live
  assert.match(seen[1], /\/v1\/replays\/rp_\w+\/anthropic\/v1\/messages$/);
  assert.match(seen[2], /\/v1\/replays\/rp_\w+\/live\/anthropic\/v1\/messages$/);
  await rs.close();
});

test("a client that is not an SDK's is refused", async () => {
  const run = await record("anthropic");
  const rs = await ReplaySession.create(urls.regista, { run });
  assert.throws(() => rs.wrap({ withOptions: () => ({}) }), RegistaError);
  await rs.close();
});

test("a server started for tapes stops when the process that started it is killed", async () => {
  const regista = path.join(path.dirname(python), "regista");
  const script = `require(${JSON.stringify(path.join(here, "../dist/server.js"))})
    .startServer({ store: ${JSON.stringify(store)}, command: ${JSON.stringify(regista)} })
    .then((s) => console.log(s.url));
    setInterval(() => {}, 1000); // alive until killed`;
  // a test runner's worker is often killed, not exited: no exit hook runs then
  const parent = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve) => createInterface({ input: parent.stdout }).once("line", resolve));
  assert.deepEqual(await (await fetch(`${url}/v1/health`)).json(), { ok: true });
  parent.kill("SIGKILL");
  let up = true;
  for (let i = 0; i < 300 && up; i++) {
    up = await fetch(`${url}/v1/health`).then(() => true, () => false);
    if (up) await new Promise((r) => setTimeout(r, 100)); // polling a state, bounded: 30 s
  }
  assert.equal(up, false, "the server outlived the process that started it");
});

test("an unreachable server is one clear error", async () => {
  await assert.rejects(ReplaySession.create("http://127.0.0.1:9", { run: "x" }), /cannot reach the regista server/);
});
