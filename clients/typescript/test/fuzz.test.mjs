// Seeded fuzz of what the client reads from the wire: a 409's body decides whether a call
// goes live. Any body, well-formed or not, answers a boolean, true only for replay_live.
// REGISTA_FUZZ_SEED picks the seed, REGISTA_FUZZ_CASES the number of bodies.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isLiveSignal } from "../dist/index.js";

const SEED = Number(process.env.REGISTA_FUZZ_SEED || 3131);
const CASES = Number(process.env.REGISTA_FUZZ_CASES || 300);

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

test("a fuzzed 409 body never throws and goes live only on replay_live", async () => {
  const r = rng(SEED);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const values = [null, 0, "", "replay_live", "replay_divergence", [], {}, [{}], true, "\u0000"];
  for (let n = 0; n < CASES; n++) {
    let body = { type: "error", error: { type: "replay_live", message: "m" } };
    for (let i = 0; i < 1 + Math.floor(r() * 3); i++) {
      const where = pick(["root", "error", "type"]);
      if (where === "root") body = pick([body, ...values]);
      else if (where === "error" && body && typeof body === "object") body.error = pick(values);
      else if (body?.error && typeof body.error === "object") body.error.type = pick(values);
    }
    let text = JSON.stringify(body) ?? "";
    if (r() < 0.2) text = text.slice(0, Math.floor(r() * text.length));
    const status = pick([409, 409, 400, 500, 200]);
    const live = await isLiveSignal(new Response(text, { status }));
    let expected = false;
    try {
      expected = status === 409 && JSON.parse(text)?.error?.type === "replay_live";
    } catch {
      expected = false;
    }
    assert.equal(live, expected, `seed ${SEED}, case ${n}: ${status} ${text.slice(0, 200)}`);
  }
});
