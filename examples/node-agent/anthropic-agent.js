// A small weather agent on @anthropic-ai/sdk: the model calls get_weather, the agent runs
// it, the model answers. The SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, so
// `regista record|replay -- node anthropic-agent.js` and the tape tests need no change here.
const Anthropic = require("@anthropic-ai/sdk").default;

const MODEL = "claude-sonnet-4-6";
// WEATHER_PROMPT: another prompt (a tape recorded with the default one then fails)
const PROMPT = process.env.WEATHER_PROMPT || "What's the weather in Paris?";
const TOOLS = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

function getWeather({ city }) {
  return `sunny in ${city}, 21°C`;
}

/** Run the agent on `prompt`; `client` defaults to one made from the environment. */
async function runAgent(prompt = PROMPT, client = new Anthropic()) {
  const messages = [{ role: "user", content: prompt }];
  for (let turn = 0; turn < 5; turn++) {
    const reply = await client.messages.create({
      model: MODEL,
      max_tokens: 256,
      system: "You are a weather assistant.",
      tools: TOOLS,
      messages,
    });
    messages.push({ role: "assistant", content: reply.content });
    const calls = reply.content.filter((b) => b.type === "tool_use");
    if (calls.length === 0) {
      return reply.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    }
    messages.push({
      role: "user",
      content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: getWeather(c.input) })),
    });
  }
  throw new Error("no answer after 5 turns");
}

module.exports = { runAgent, PROMPT };

if (require.main === module) {
  runAgent(process.argv[2] || PROMPT).then(
    (answer) => console.log(answer),
    (err) => {
      console.error(String(err));
      process.exit(1);
    },
  );
}
