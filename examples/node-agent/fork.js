// node fork.js REGISTA_URL RUN [anthropic|openai]
//
// Fork a recorded run of the weather agent in signal mode: its tool step (step 1) gets
// another result, the calls up to there are served from the recording, and from the first
// `409 replay_live` on the wrapped client calls the real provider through regista, which
// records the fork, linked to its parent. Prints the answer and the fork's run as JSON.
const Anthropic = require("@anthropic-ai/sdk").default;
const OpenAI = require("openai").default;
const { ReplaySession } = require("@regista/client");

async function main() {
  const [url, run, kind = "anthropic"] = process.argv.slice(2);
  if (!url || !run) throw new Error("usage: node fork.js REGISTA_URL RUN [anthropic|openai]");
  const rs = await ReplaySession.create(url, {
    run,
    edits: [{ step: 1, tool_result: "rainy in Paris, 12°C" }],
  });
  const agent = require(kind === "openai" ? "./openai-agent.js" : "./anthropic-agent.js");
  const client = kind === "openai" ? new OpenAI() : new Anthropic();
  const answer = await agent.runAgent(undefined, rs.wrap(client));
  const { parent, runs } = await rs.close();
  const fork = runs[0];
  console.log(
    JSON.stringify({
      answer,
      live: rs.live,
      parent,
      fork: fork && {
        id: fork.session_id,
        forked_from: fork.forked_from.session_id,
        outcome: fork.outcome,
        cost_usd: fork.cost_usd,
        steps: fork.steps,
      },
    }),
  );
}

main().catch((err) => {
  console.error(String(err));
  process.exit(1);
});
