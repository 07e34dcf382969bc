// The same weather agent on openai (chat completions). The SDK reads OPENAI_BASE_URL and
// OPENAI_API_KEY, so `regista record|replay -- node openai-agent.js` and the tape tests
// need no change here.
const OpenAI = require("openai").default;

const MODEL = "gpt-4o-mini";
// WEATHER_PROMPT: another prompt (a tape recorded with the default one then fails)
const PROMPT = process.env.WEATHER_PROMPT || "What's the weather in Paris?";
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

function getWeather({ city }) {
  return `sunny in ${city}, 21°C`;
}

/** Run the agent on `prompt`; `client` defaults to one made from the environment. */
async function runAgent(prompt = PROMPT, client = new OpenAI()) {
  const messages = [
    { role: "system", content: "You are a weather assistant." },
    { role: "user", content: prompt },
  ];
  for (let turn = 0; turn < 5; turn++) {
    const reply = await client.chat.completions.create({ model: MODEL, tools: TOOLS, messages });
    const message = reply.choices[0].message;
    messages.push(message);
    const calls = message.tool_calls || [];
    if (calls.length === 0) return message.content || "";
    for (const call of calls) {
      const result = getWeather(JSON.parse(call.function.arguments));
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
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
