// Tape tests from vitest: each golden run replayed strictly against the agent's current code.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { playTape, tapeTest } from "@regista/client";
import anthropicAgent from "../../anthropic-agent.js";
import openaiAgent from "../../openai-agent.js";

const TAPES = process.env.REGISTA_TAPES || path.join(path.dirname(fileURLToPath(import.meta.url)), "../../tapes");

test("the Anthropic agent walks its golden run", tapeTest(path.join(TAPES, "anthropic.jsonl"), () => anthropicAgent.runAgent()));

test("the OpenAI agent walks its golden run", tapeTest(path.join(TAPES, "openai.jsonl"), () => openaiAgent.runAgent()));

test("a changed prompt fails the tape, naming the step and the field", async () => {
  const run = playTape(path.join(TAPES, "anthropic.jsonl"), () => anthropicAgent.runAgent("What's the weather in Lyon?"));
  await expect(run).rejects.toThrow(/anthropic\.jsonl: diverged at step 0 \(model call\): messages\[0\]/);
  const chat = playTape(path.join(TAPES, "openai.jsonl"), () => openaiAgent.runAgent("What's the weather in Lyon?"));
  await expect(chat).rejects.toThrow(/openai\.jsonl: diverged at step 0 \(model call\): messages\[0\]/);
});
