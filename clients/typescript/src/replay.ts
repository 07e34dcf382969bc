/**
 * Replays and signal-mode forks on a regista server, for Node agents.
 *
 * `ReplaySession.create` asks the server for a replay (or a fork: edits, a live point) and
 * gives the two base URLs to hand to `@anthropic-ai/sdk` and `openai`. `wrap(client)` gives
 * a copy of an SDK client whose calls go to the replay; when the replay answers
 * `409 replay_live` (the fork is past its live point), that call and every later one go to
 * the real provider through the replay's live URLs, so regista records them into the fork's
 * trace, linked to its parent. `close()` deletes the replay, which ends the fork's trace
 * (how it ended, what it cost), and answers the fork's runs as `regista runs` shows them.
 */

import { RegistaError } from "./errors";

/** An edit of a fork: another result for a tool step, or another answer for a model step. */
export type Edit =
  | { step: number; tool_result: string | unknown[]; is_error?: boolean }
  | {
      step: number;
      answer: string | unknown[] | { content: string | unknown[]; stop_reason?: string };
    };

/** What to replay, and how. */
export interface ReplayOptions {
  /** The run: its session id, or its file name in the server's store. */
  run: string;
  /** `strict` (default): a request the tape does not hold is refused; `loose`: served anyway. */
  mode?: "strict" | "loose";
  /** A fork's edits. */
  edits?: Edit[];
  /** The last step served from the tape (default: the last edit). -1: live from the start. */
  liveAfter?: number;
  /**
   * Past the live point: `signal` (default for a fork) answers 409 `replay_live` and the
   * wrapped clients go live; `proxy` makes the server go live itself.
   */
  live?: "signal" | "proxy";
  /** The server's token, when it has one. */
  token?: string;
  /** How long the replay lives on the server (seconds, at most a day). */
  ttlSeconds?: number;
  /** `false`: no masks, every byte of a request counts in a strict match. */
  masks?: boolean;
  /**
   * A fork's live calls ask for this model, whatever the program names (`regista rewind
   * --model NAME -- CMD`): regista sends them so and writes them so, and the fork's
   * `forked_from.model` names it; the recorded prefix is served as it was. Needs a fork that
   * goes live (edits or `liveAfter`).
   */
  model?: string;
}

/** What `GET /v1/replays/{id}` answers. */
export interface ReplayStatus {
  id: string;
  run: string;
  mode: string;
  calls: number;
  requests: number;
  served: number;
  matched: number;
  live_calls: number;
  rejected: number;
  live_from: number | null;
  divergence: { step: number; diff: string[]; nearest: string; detail?: string } | null;
  forked_from: Record<string, unknown> | null;
  /** The fork's runs written by the server (their ids in the store). */
  runs: string[];
  /** Why the run fails as a tape test (the message `regista test` prints), or null. */
  tape_failure: string | null;
  [key: string]: unknown;
}

/** A run as `GET /v1/runs/{id}` gives it (the facts `regista runs` and `show` give). */
export interface RunSummary {
  session_id: string;
  task: string;
  model: string;
  outcome: string;
  status: string;
  complete: boolean;
  steps: number;
  cost_usd: number | null;
  cost_basis: string;
  tokens: Record<string, number>;
  output: string | null;
  forked_from: { session_id: string; at_step: number; [key: string]: unknown } | null;
  replay_of: string | null;
  [key: string]: unknown;
}

/** What `close()` answers: the recorded run and the fork's runs, each with its parent. */
export interface ForkResult {
  parent: string;
  runs: RunSummary[];
}

/** Any client with `withOptions` (both `@anthropic-ai/sdk` and `openai` have it). */
export interface WithOptions<T> {
  withOptions(options: { baseURL?: string; fetch?: typeof fetch; [key: string]: unknown }): T;
}

interface Created {
  id: string;
  anthropic_base_url: string;
  openai_base_url: string;
  anthropic_live_url?: string;
  openai_live_url?: string;
  expires_at: string;
}

/** Whether `response` is the replay's cue to go live (409 with `replay_live`). */
export async function isLiveSignal(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    const body = (await response.clone().json()) as { error?: { type?: unknown } };
    return body?.error?.type === "replay_live";
  } catch {
    return false;
  }
}

function urlOf(input: string | URL | Request): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/** A replay (or fork) of a recorded run on a regista server. */
export class ReplaySession {
  /** Whether the calls now go to the real provider (past a `409 replay_live`). */
  live = false;
  /** The replay's id on the server. */
  readonly id: string;
  /** Give to `@anthropic-ai/sdk` as `baseURL` (or `ANTHROPIC_BASE_URL`). */
  readonly anthropicBaseURL: string;
  /** Give to `openai` as `baseURL` (or `OPENAI_BASE_URL`). */
  readonly openaiBaseURL: string;
  /** Where live calls go (through regista, which records them), when the server writes the fork. */
  readonly anthropicLiveURL: string | null;
  readonly openaiLiveURL: string | null;
  readonly expiresAt: string;
  /**
   * A `fetch` that sends a call to the replay and, from its first `409 replay_live` on,
   * to the live URLs: give it to any SDK that takes a `fetch` (the wrapped clients use it).
   */
  readonly fetch: typeof fetch;

  private constructor(
    readonly url: string,
    readonly run: string,
    created: Created,
    private readonly token: string | undefined,
  ) {
    this.id = created.id;
    this.anthropicBaseURL = created.anthropic_base_url;
    this.openaiBaseURL = created.openai_base_url;
    this.anthropicLiveURL = created.anthropic_live_url ?? null;
    this.openaiLiveURL = created.openai_live_url ?? null;
    this.expiresAt = created.expires_at;
    this.fetch = this.switching(globalThis.fetch);
  }

  /** Create a replay of `options.run` on the server at `url` (`http://127.0.0.1:8787`). */
  static async create(url: string, options: ReplayOptions): Promise<ReplaySession> {
    const base = url.replace(/\/+$/, "");
    const isFork = (options.edits?.length ?? 0) > 0 || options.liveAfter !== undefined;
    const live = options.live ?? (isFork ? "signal" : undefined);
    const body: Record<string, unknown> = { run: options.run, edits: options.edits ?? [] };
    if (options.mode !== undefined) body.mode = options.mode;
    if (options.liveAfter !== undefined) body.live_after = options.liveAfter;
    if (live !== undefined) body.live = live;
    // a signal fork's trace is the server's: it writes the calls it serves and the live ones
    if (live === "signal") body.trace = "server";
    if (options.ttlSeconds !== undefined) body.ttl_seconds = options.ttlSeconds;
    if (options.masks !== undefined) body.masks = options.masks;
    if (options.model !== undefined) {
      if (typeof options.model !== "string" || options.model.trim() === "") {
        throw new RegistaError("model: give a model's name (a non-empty string)");
      }
      body.model = options.model;
    }
    const created = (await call(base, "POST", "/v1/replays", options.token, body, 201)) as Created;
    return new ReplaySession(base, options.run, created, options.token);
  }

  /** The two environment lines an SDK reads its base URL from. */
  env(): { ANTHROPIC_BASE_URL: string; OPENAI_BASE_URL: string } {
    return { ANTHROPIC_BASE_URL: this.anthropicBaseURL, OPENAI_BASE_URL: this.openaiBaseURL };
  }

  /**
   * A copy of an `@anthropic-ai/sdk` or `openai` client whose calls go to the replay, then
   * live. The copy keeps the client's own options (its API key goes with the live calls,
   * forwarded by regista, never written).
   */
  wrap<T extends WithOptions<T>>(client: T): T {
    const c = client as unknown as Record<string, unknown>;
    const isOpenAI = typeof c.chat === "object" && c.chat !== null;
    const isAnthropic = !isOpenAI && typeof c.messages === "object" && c.messages !== null;
    if (!isOpenAI && !isAnthropic) {
      throw new RegistaError("cannot wrap this client: give an @anthropic-ai/sdk or openai client");
    }
    const baseURL = isOpenAI ? this.openaiBaseURL : this.anthropicBaseURL;
    // the client's own fetch (a proxy's, a gateway's) still makes the requests
    const own = typeof c.fetch === "function" ? (c.fetch as typeof fetch) : globalThis.fetch;
    return client.withOptions({ baseURL, fetch: this.switching(own) });
  }

  /** The replay's counts, first divergence, the fork's runs and its verdict as a tape. */
  async status(): Promise<ReplayStatus> {
    return (await call(this.url, "GET", `/v1/replays/${this.id}`, this.token)) as ReplayStatus;
  }

  /** A run of the server's store, as `regista runs` shows it. */
  async runSummary(runId: string): Promise<RunSummary> {
    return (await call(this.url, "GET", `/v1/runs/${runId}`, this.token)) as RunSummary;
  }

  /**
   * Delete the replay: the fork's trace ends (`session.end`: how it ended, what it cost).
   * Answers the fork's runs, each linked to its parent.
   */
  async close(): Promise<ForkResult> {
    let runs: string[] = [];
    try {
      runs = (await this.status()).runs ?? [];
    } catch {
      // expired already: nothing more to say of it
    }
    try {
      await call(this.url, "DELETE", `/v1/replays/${this.id}`, this.token, undefined, 204);
    } catch {
      // expired already: the server ended its trace then
    }
    const summaries = [];
    for (const run of runs) summaries.push(await this.runSummary(run));
    return { parent: this.run, runs: summaries };
  }

  private liveURL(url: string): string | null {
    const pairs: [string, string | null][] = [
      [this.anthropicBaseURL, this.anthropicLiveURL],
      [this.openaiBaseURL, this.openaiLiveURL],
    ];
    for (const [replay, live] of pairs) {
      if (live !== null && url.startsWith(replay)) return live + url.slice(replay.length);
    }
    return null;
  }

  /** A `fetch` over `inner` that goes live from the first `409 replay_live` on. */
  private switching(inner: typeof fetch): typeof fetch {
    const go = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = urlOf(input);
      const given = init?.headers ?? (input instanceof Request ? input.headers : {});
      const headers = new Headers(given);
      if (this.token) headers.set("x-regista-token", this.token);
      const sent = { ...init, headers };
      const live = this.liveURL(url);
      if (this.live && live !== null) return inner(live, sent);
      const response = await inner(input instanceof Request ? new Request(input, sent) : url, sent);
      if (live === null || !(await isLiveSignal(response))) return response;
      // past the live point: this call, and every later one, to the real provider
      this.live = true;
      await response.body?.cancel();
      return inner(live, sent);
    };
    return go as typeof fetch;
  }
}

async function call(
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  expect = 200,
): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (token) headers["x-regista-token"] = token;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new RegistaError(`cannot reach the regista server at ${base}: ${String(err)}`, {
      cause: err,
    });
  }
  if (response.status !== expect) {
    const text = await response.text();
    let message = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { error?: { message?: string } };
      message = parsed.error?.message ?? message;
    } catch {
      // not JSON: the text as it came
    }
    throw new RegistaError(`${method} ${path}: ${response.status}: ${message}`);
  }
  return response.status === 204 ? null : response.json();
}
