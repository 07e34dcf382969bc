/**
 * A `regista serve` started from Node, on a free port of 127.0.0.1, over a folder of traces.
 *
 * `tapeTest` starts one per folder of tapes when no server is named (`REGISTA_URL`). It runs
 * with `--until-stdin-closes` on a pipe from this process: however this process ends (a test
 * runner's worker is often killed, not exited), the pipe closes and the server stops. The
 * command is `regista` on the PATH, or `REGISTA_BIN`.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { RegistaError } from "./errors";

/** A server started by `startServer`. */
export interface LocalServer {
  /** Its base URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** Stop it (a replay's fork trace is ended first: the server ends it on its way out). */
  stop(): Promise<void>;
}

/** How to start a server. */
export interface ServerOptions {
  /** The folder of traces it serves (and writes forks into). */
  store: string;
  /** The `regista` command (default: `REGISTA_BIN`, else `regista` on the PATH). */
  command?: string;
  /** More environment for the server (e.g. `ANTHROPIC_BASE_URL`: its upstream). */
  env?: Record<string, string>;
  /** How long to wait for it to listen, in milliseconds (default 60 s). */
  timeoutMs?: number;
}

const started = new Set<ChildProcess>();
let exitHook = false;

/** Start `regista serve --store STORE --port 0` and wait until it says where it listens. */
export function startServer(options: ServerOptions): Promise<LocalServer> {
  const command = options.command ?? process.env.REGISTA_BIN ?? "regista";
  const args = ["serve", "--store", options.store, "--port", "0", "--until-stdin-closes"];
  const child = spawn(command, args, {
    stdio: ["pipe", "ignore", "pipe"],
    env: { ...process.env, ...options.env },
  });
  started.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const c of started) c.kill();
    });
  }
  return new Promise((resolve, reject) => {
    let said = "";
    let done = false;
    const fail = (why: string): void => {
      if (done) return;
      done = true;
      child.kill();
      started.delete(child);
      reject(new RegistaError(`${command} serve did not start: ${why}${said ? `\n${said.trim()}` : ""}`));
    };
    const timer = setTimeout(() => fail("it did not listen in time"), options.timeoutMs ?? 60_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      fail(String(err));
    });
    child.on("exit", (code) => {
      started.delete(child);
      clearTimeout(timer);
      fail(`it exited with code ${code}`);
    });
    // read all it says, always: a full pipe would stop the server
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      if (done) return;
      said = (said + chunk).slice(-4000);
      const m = /serving .* on (http:\/\/\S+)/.exec(said);
      if (m === null) return;
      done = true;
      clearTimeout(timer);
      // the server does not keep this process alive: it stops when this process goes away
      child.unref();
      for (const pipe of [child.stdin, child.stderr]) {
        (pipe as unknown as { unref?: () => void } | null)?.unref?.();
      }
      resolve({
        url: m[1],
        stop: () =>
          new Promise<void>((res) => {
            if (child.exitCode !== null) return res();
            child.once("exit", () => res());
            child.stdin?.end(); // it stops as on Ctrl-C, its fork traces ended
          }),
      });
    });
  });
}
