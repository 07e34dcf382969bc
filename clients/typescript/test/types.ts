// Compiled with `tsc -p test` (no output): the client's types as a TypeScript user meets them.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  type ForkResult,
  type ReplayStatus,
  ReplaySession,
  TapeMismatch,
  playTape,
  tapeTest,
} from "../src/index";

async function typed(): Promise<void> {
  const rs = await ReplaySession.create("http://127.0.0.1:8787", {
    run: "01J",
    edits: [{ step: 1, tool_result: "rainy" }, { step: 2, answer: "done" }],
    liveAfter: 2,
    model: "claude-opus-4-1",
  });
  const claude: Anthropic = rs.wrap(new Anthropic({ apiKey: "k" }));
  const gpt: OpenAI = rs.wrap(new OpenAI({ apiKey: "k" }));
  const env: { ANTHROPIC_BASE_URL: string; OPENAI_BASE_URL: string } = rs.env();
  const status: ReplayStatus = await rs.status();
  const failure: string | null = status.tape_failure;
  const closed: ForkResult = await rs.close();
  const cost: number | null | undefined = closed.runs[0]?.cost_usd;
  const test: () => Promise<void> = tapeTest("tapes/a.jsonl", async () => claude.models);
  const played: ReplayStatus = await playTape("tapes/a.jsonl", () => gpt.models);
  const err: Error = new TapeMismatch("x");

  void [env, failure, cost, test, played, err];
}
void typed;
