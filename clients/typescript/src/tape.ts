/**
 * Tape tests for Node agents, from any test runner (vitest, jest, node's own).
 *
 * ```ts
 * import { tapeTest } from "@regista/client";
 * test("the weather agent walks its golden run", tapeTest("tapes/weather.jsonl", () => runAgent()));
 * ```
 *
 * A strict replay of the tape serves the body's model calls (`ANTHROPIC_BASE_URL` and
 * `OPENAI_BASE_URL` point at it while the body runs: make the SDK clients inside it). The
 * test fails with the message `regista test` prints for the same run: the step, the field
 * and the character where the agent left the recorded path, or the step it stopped short of.
 */

import * as path from "node:path";
import { TapeMismatch } from "./errors";
import { ReplaySession, type ReplayStatus } from "./replay";
import { startServer, type LocalServer } from "./server";

/** Where the tape is served from. */
export interface TapeOptions {
  /**
   * A running server whose store holds the tape (the tape is then its run id or file
   * name). Default: `REGISTA_URL`; without one, a server is started over the tape's folder.
   */
  url?: string;
  /** The server's token. */
  token?: string;
  /** The `regista` command for a server started here (default: `REGISTA_BIN`, else `regista`). */
  command?: string;
  /** `false`: every byte of a request counts (no masks). */
  masks?: boolean;
}

const servers = new Map<string, Promise<LocalServer>>();
const PLACEHOLDER_KEY = "regista-replay-needs-no-key";
const ENV_KEYS = ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

async function serverFor(tape: string, options: TapeOptions): Promise<{ url: string; run: string }> {
  const url = options.url ?? process.env.REGISTA_URL;
  if (url) return { url, run: path.basename(tape) };
  const store = path.dirname(path.resolve(tape));
  let server = servers.get(store);
  if (server === undefined) {
    server = startServer({ store, command: options.command });
    servers.set(store, server);
    server.catch(() => servers.delete(store));
  }
  return { url: (await server).url, run: path.basename(tape) };
}

/**
 * Run `body` against a strict replay of `tape`; throws `TapeMismatch` when the run leaves
 * the recorded path. Answers the replay's final status.
 */
export async function playTape(
  tape: string,
  body: () => unknown,
  options: TapeOptions = {},
): Promise<ReplayStatus> {
  const { url, run } = await serverFor(tape, options);
  const session = await ReplaySession.create(url, {
    run,
    mode: "strict",
    token: options.token,
    masks: options.masks,
  });
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  Object.assign(process.env, session.env());
  process.env.ANTHROPIC_API_KEY ||= options.token ?? PLACEHOLDER_KEY;
  process.env.OPENAI_API_KEY ||= options.token ?? PLACEHOLDER_KEY;
  let failed: unknown = undefined;
  let threw = false;
  try {
    await body();
  } catch (err) {
    failed = err;
    threw = true;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  let status: ReplayStatus;
  try {
    status = await session.status();
  } finally {
    await session.close();
  }
  if (status.tape_failure) {
    throw new TapeMismatch(status.tape_failure, threw ? { cause: failed } : undefined);
  }
  if (threw) throw failed;
  return status;
}

/** A test function for `test(name, tapeTest(tape, body))`: `playTape` when it runs. */
export function tapeTest(
  tape: string,
  body: () => unknown,
  options: TapeOptions = {},
): () => Promise<void> {
  return async () => {
    await playTape(tape, body, options);
  };
}
