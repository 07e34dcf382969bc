// Tape tests from jest: each golden run replayed strictly against the agent's current code.
const path = require("node:path");
const { playTape, tapeTest } = require("@regista/client");
const anthropicAgent = require("../../anthropic-agent.js");
const openaiAgent = require("../../openai-agent.js");

const TAPES = process.env.REGISTA_TAPES || path.join(__dirname, "../../tapes");
// the first tape test starts a regista server (a Python process)
jest.setTimeout(60_000);

test("the Anthropic agent walks its golden run", tapeTest(path.join(TAPES, "anthropic.jsonl"), () => anthropicAgent.runAgent()));

test("the OpenAI agent walks its golden run", tapeTest(path.join(TAPES, "openai.jsonl"), () => openaiAgent.runAgent()));

test("a changed prompt fails the tape, naming the step and the field", async () => {
  const run = playTape(path.join(TAPES, "anthropic.jsonl"), () => anthropicAgent.runAgent("What's the weather in Lyon?"));
  await expect(run).rejects.toThrow(/anthropic\.jsonl: diverged at step 0 \(model call\): messages\[0\]/);
  const chat = playTape(path.join(TAPES, "openai.jsonl"), () => openaiAgent.runAgent("What's the weather in Lyon?"));
  await expect(chat).rejects.toThrow(/openai\.jsonl: diverged at step 0 \(model call\): messages\[0\]/);
});
