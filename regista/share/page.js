"use strict";
// regista share: draws a run (or two) from the JSON block above. Text only ever reaches the
// page through textContent: nothing from the trace is parsed as HTML.
(function () {
  var DATA = JSON.parse(document.getElementById("regista-data").textContent);
  var TWO = !!DATA.b;
  var SLICE = 400;
  var MAX_TEXT = 200000;
  var app = document.getElementById("app");
  var rows = [];
  var selected = -1;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  // After a label ("cost …") an unknown cost reads "unknown"; standing alone, "cost unknown".
  function amount(v) { return v === null || v === undefined ? "unknown" : "$" + Number(v).toFixed(4); }
  function cost(v) { return v === null || v === undefined ? "cost unknown" : amount(v); }
  function num(n) { return Number(n || 0).toLocaleString("en-US"); }
  function tokens(t) {
    if (!t) return "";
    var s = "in " + num(t.input) + " · out " + num(t.output) + " · cache read " + num(t.cache_read) +
      " · cache write 5m " + num(t.cache_write_5m) + " / 1h " + num(t.cache_write_1h);
    return t.reasoning ? s + " · reasoning " + num(t.reasoning) : s;
  }
  function secs(ms) { return ms === null || ms === undefined ? "" : (ms / 1000).toFixed(2) + " s"; }
  var KIND = { model: "◆", tool: "▸", compaction: "≡" };

  function header(run, label) {
    var h = run.header;
    var box = el("div", "run-header");
    var title = el("h1", null, (label ? label + " · " : "") + (h.task || "(no task)"));
    box.appendChild(title);
    var meta = el("div", "meta");
    function item(k, v, cls) {
      var s = el("span", cls);
      s.appendChild(document.createTextNode(k + " "));
      s.appendChild(el("b", null, v));
      meta.appendChild(s);
    }
    var STATUS = { ok: "ok", failed: "error", in_progress: "unfinished", no_stop_reason: null };
    item("outcome", h.status_text || h.outcome, STATUS[h.status] || null);
    item("model", h.provider === "scripted" ? "scripted" : h.model + " (" + h.provider + ")");
    item("steps", h.steps);
    var basis = (h.cost_basis || "").replace(/^unknown:? ?/, "");
    item("cost", amount(h.cost_usd) + (basis ? " (" + basis + ")" : ""));
    if (h.tokens) item("tokens", tokens(h.tokens));
    if (h.duration_ms !== null) item("time", secs(h.duration_ms));
    if (h.errors) item("errors", h.errors, "error");
    if (h.denials) item("denied", h.denials, "denied");
    item("id", h.session_id);
    if (h.replay_of) item("replay of", h.replay_of, "link");
    if (h.forked_from) item("fork of", h.forked_from.session_id + " at step " + h.forked_from.at_step, "link");
    if (h.savings) item("", h.savings, "ok");
    box.appendChild(meta);
    if (h.error) box.appendChild(el("div", "error", "error: " + h.error));
    return box;
  }

  function longText(parent, text) {
    text = typeof text === "string" ? text : JSON.stringify(text, null, 2);
    var pre = el("pre", null, text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text);
    parent.appendChild(pre);
    if (text.length > MAX_TEXT) {
      var b = el("button", "more", "show all " + text.length.toLocaleString() + " characters");
      b.addEventListener("click", function () { pre.textContent = text; b.remove(); });
      parent.appendChild(b);
    }
  }

  function blocks(parent, content) {
    if (typeof content === "string") { longText(parent, content); return; }
    (content || []).forEach(function (b) {
      if (b && b.type === "text") { longText(parent, b.text); }
      else if (b && b.type === "tool_use") {
        parent.appendChild(el("div", "kv", "tool_use " + b.name + " (" + b.id + ")"));
        longText(parent, b.input);
      } else if (b && b.type === "tool_result") {
        parent.appendChild(el("div", "kv", "tool_result for " + b.tool_use_id + (b.is_error ? " (error)" : "")));
        blocks(parent, b.content);
      } else if (b && b.type === "thinking") {
        parent.appendChild(el("div", "kv", "thinking"));
        longText(parent, b.thinking);
      } else { longText(parent, b); }
    });
  }

  function kv(parent, k, v, cls) {
    var d = el("div", "kv");
    d.appendChild(document.createTextNode(k + ": "));
    d.appendChild(el("b", cls, v));
    parent.appendChild(d);
  }

  function event(ev) {
    var box = el("section", "event");
    box.appendChild(el("h3", null, ev.type + "  ·  seq " + ev.seq + "  ·  " + ev.ts));
    var body = el("div", "body");
    box.appendChild(body);
    if (ev.type === "llm.request") {
      kv(body, "request hash", ev.request_hash);
      kv(body, "messages", "kept " + ev.messages_prefix + " from the previous request, " + ev.messages.length + " new");
    } else if (ev.type === "llm.response") {
      var r = ev.response || {};
      kv(body, "stop reason", r.stop_reason);
      kv(body, "answered by", ev.provider + " (" + ev.source + ")");
      kv(body, "cost / time", cost(ev.cost_usd) + " · " + secs(ev.duration_ms));
      if (ev.tokens) kv(body, "tokens", tokens(ev.tokens));
      blocks(body, r.content);
    } else if (ev.type === "tool.call") {
      kv(body, "tool", ev.name + " (" + ev.tool_use_id + ")");
      longText(body, ev.input);
    } else if (ev.type === "permission.decision") {
      kv(body, "decision", (ev.allowed ? "allowed" : "denied") + " by " + ev.by + (ev.reason ? ": " + ev.reason : ""), ev.allowed ? "ok" : "denied");
    } else if (ev.type === "tool.result") {
      kv(body, "result", (ev.is_error ? "error" : "ok") + " · " + ev.source + " · " + secs(ev.duration_ms), ev.is_error ? "error" : "ok");
      blocks(body, ev.content);
    } else if (ev.type === "error") {
      kv(body, ev.where + " error", ev.error_type, "error");
      longText(body, ev.message);
    } else if (ev.type === "context.compaction") {
      kv(body, "replaced", ev.replaced.length + " messages (" + ev.tokens_before + " tokens)");
      longText(body, ev.summary);
    } else { longText(body, ev); }
    return box;
  }

  function requestDiff(req) {
    var box = el("section", "event request-diff");
    box.appendChild(el("h3", null, req.first ? "request (the first)" : "request diff (against the previous request)"));
    var body = el("div", "body");
    box.appendChild(body);
    if (req.first && req.system) { kv(body, "system", ""); longText(body, req.system); }
    if (req.changes.length) {
      var ul = el("ul", "changes");
      req.changes.forEach(function (c) { ul.appendChild(el("li", null, c)); });
      body.appendChild(ul);
    } else if (!req.first) { body.appendChild(el("div", "kv", "model, system, tools and parameters unchanged")); }
    kv(body, "messages", req.total + " in all: " + req.kept + " as before, " + req.new_messages.length + " new");
    req.new_messages.forEach(function (m) {
      body.appendChild(el("div", "kv", "+ " + m.role));
      blocks(body, m.content);
    });
    return box;
  }

  function stepDetail(run, pos) {
    var box = el("div", "step-detail");
    if (pos === null || pos === undefined) { box.appendChild(el("div", "hint", "(no step on this side)")); return box; }
    var st = run.steps[pos];
    var d = JSON.parse(run.details[pos]);
    var title = el("h2", null, "step " + st.i + " · " + st.kind + " · " + st.status);
    title.className = st.status;
    box.appendChild(title);
    box.appendChild(el("div", "kv", st.label));
    if (d.request) box.appendChild(requestDiff(d.request));
    d.events.forEach(function (ev) { if (ev.type !== "llm.request") box.appendChild(event(ev)); });
    d.events.forEach(function (ev) { if (ev.type === "llm.request") box.appendChild(event(ev)); });
    return box;
  }

  var detail = el("div", "detail");
  detail.id = "detail";
  detail.appendChild(el("div", "hint", TWO ? "Pick a pair of steps on the left (j / k move)." : "Pick a step on the left (j / k move)."));
  var timeline = el("div", "timeline");
  timeline.id = "timeline";

  function select(i) {
    if (i < 0 || i >= rows.length) return;
    while (i >= timeline.querySelectorAll(".row").length) more();
    var old = timeline.querySelector(".row.selected");
    if (old) old.classList.remove("selected");
    var row = timeline.querySelectorAll(".row")[i];
    row.classList.add("selected");
    row.scrollIntoView({ block: "nearest" });
    selected = i;
    detail.textContent = "";
    if (TWO) {
      var p = DATA.pairs[i];
      detail.appendChild(el("h2", p.kind, "pair " + i + ": " + p.label));
      if (p.changes.length) {
        var ul = el("ul", "changes");
        p.changes.forEach(function (c) { ul.appendChild(el("li", null, c)); });
        detail.appendChild(ul);
      }
      var sides = el("div", "sides");
      var left = el("div", "side-a"); left.appendChild(el("div", "kv", "A")); left.appendChild(stepDetail(DATA.a, p.a));
      var right = el("div", "side-b"); right.appendChild(el("div", "kv", "B")); right.appendChild(stepDetail(DATA.b, p.b));
      sides.appendChild(left); sides.appendChild(right);
      detail.appendChild(sides);
    } else {
      detail.appendChild(stepDetail(DATA.a, i));
    }
    detail.scrollTop = 0;
    if (history.replaceState) history.replaceState(null, "", "#step-" + i);
  }

  function stepRow(st) {
    var r = el("div", "row " + st.status);
    r.appendChild(el("span", "n", st.i));
    r.appendChild(el("span", "k", KIND[st.kind] || "?"));
    r.appendChild(el("span", "l", (st.repeat ? "↻ " : "") + st.label));
    if (st.repeat) r.title = st.repeat.text;
    r.appendChild(el("span", "s " + st.status, st.status === "ok" ? (st.source === "live" || !st.source ? "" : st.source) : st.status));
    return r;
  }
  function pairRow(p) {
    var r = el("div", "row pair " + p.kind);
    var a = p.a === null ? null : DATA.a.steps[p.a];
    var b = p.b === null ? null : DATA.b.steps[p.b];
    r.appendChild(el("span", "half", a ? a.i + " " + a.label : "—"));
    r.appendChild(el("span", "tag", p.label));
    r.appendChild(el("span", "half", b ? b.i + " " + b.label : "—"));
    return r;
  }

  rows = TWO ? DATA.pairs : DATA.a.steps;
  var drawn = 0;
  function more() {
    var end = Math.min(rows.length, drawn + SLICE);
    var frag = document.createDocumentFragment();
    for (var i = drawn; i < end; i++) {
      var r = TWO ? pairRow(rows[i]) : stepRow(rows[i]);
      r.dataset.index = String(i);
      frag.appendChild(r);
    }
    timeline.appendChild(frag);
    drawn = end;
  }
  timeline.addEventListener("click", function (e) {
    var r = e.target.closest(".row");
    if (r) select(Number(r.dataset.index));
  });
  timeline.addEventListener("scroll", function () {
    if (drawn < rows.length && timeline.scrollTop + timeline.clientHeight > timeline.scrollHeight - 400) more();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "j" || e.key === "ArrowDown") { select(Math.min(rows.length - 1, selected + 1)); e.preventDefault(); }
    if (e.key === "k" || e.key === "ArrowUp") { select(Math.max(0, selected - 1)); e.preventDefault(); }
  });

  // The waterfall: one bar per step on the run's time axis (where the time went), coloured by
  // kind, failed steps marked, repeats flagged; each row also says its time, tokens and cost,
  // and a bar's title and label say them on hover and focus.
  var WF_ROWS = 400;
  function waterfall(run, label) {
    var steps = run.steps;
    // The axis runs from the run's start for as long as the run took (a step may end later
    // only in an odd trace); the caption says the run's time, as the header does.
    var took = run.header.duration_ms;
    var total = took || 0;
    steps.forEach(function (s) { if (s.end !== null && s.end !== undefined && s.end > total) total = s.end; });
    var box = el("section", "waterfall");
    box.id = "waterfall" + (label ? "-" + label.toLowerCase() : "");
    var table = el("table", "wf");
    var rep = run.header.repeats;
    var what = (label ? label + " · " : "") + "Where the time went: one bar per step, " + secs(took == null ? total : took) + " in all";
    if (rep) what += " · " + rep.count + " repeated step" + (rep.count > 1 ? "s" : "") + " (↻) took " +
      num(rep.tokens ? rep.tokens.total : 0) + " tokens, " + cost(rep.cost_usd);
    table.appendChild(el("caption", null, what));
    var head = el("tr");
    ["#", "step", "time axis", "time", "tokens", "cost"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    table.appendChild(body);
    function row(s, i) {
      var tr = el("tr", "wf-row " + s.kind + (s.status === "error" || s.status === "denied" ? " failed" : "") + (s.repeat ? " repeat" : ""));
      tr.dataset.index = String(i);
      tr.appendChild(el("td", "n", s.i));
      var name = el("td", "l", (s.status === "error" ? "✗ " : s.status === "denied" ? "⊘ " : "") + (s.repeat ? "↻ " : "") + s.label);
      tr.appendChild(name);
      var track = el("td", "track");
      // A step's time is its ms (the one every view gives); start and end place it.
      var dur = s.start !== null && s.start !== undefined ? s.ms : null;
      var tip = "step " + s.i + " · " + s.kind + " · " + s.status + " · " + (dur === null ? "time unknown" : secs(dur)) +
        (s.tokens ? " · tokens " + tokens(s.tokens) : "") + " · " + cost(s.cost) + (s.repeat ? " · " + s.repeat.text : "");
      if (dur !== null && total > 0) {
        var bar = el("div", "bar " + s.kind);
        bar.style.left = (100 * s.start / total) + "%";
        bar.style.width = (100 * dur / total) + "%";
        bar.tabIndex = 0;
        bar.title = tip;
        bar.setAttribute("role", "img");
        bar.setAttribute("aria-label", tip);
        bar.dataset.ms = String(dur);
        bar.appendChild(el("span", "tip", tip));
        track.appendChild(bar);
      }
      tr.appendChild(track);
      tr.appendChild(el("td", "t", dur === null ? "" : secs(dur)));
      tr.appendChild(el("td", "t", s.tokens ? num(s.tokens.total) : ""));
      tr.appendChild(el("td", "t", s.kind === "tool" ? "" : cost(s.cost)));
      return tr;
    }
    var shown = Math.min(steps.length, WF_ROWS);
    for (var i = 0; i < shown; i++) body.appendChild(row(steps[i], i));
    box.appendChild(table);
    if (steps.length > shown) {
      var all = el("button", "more", "show all " + steps.length.toLocaleString() + " steps");
      all.addEventListener("click", function () {
        for (var j = shown; j < steps.length; j++) body.appendChild(row(steps[j], j));
        all.remove();
      });
      box.appendChild(all);
    }
    if (!TWO) body.addEventListener("click", function (e) {
      var r = e.target.closest(".wf-row");
      if (r) select(Number(r.dataset.index));
    });
    return box;
  }

  // Where the time and the money went: the run's groups by tool, model, turn or subagent
  // (the table regista show --by prints), each with its share of the run's cost and time.
  function byTable(run, label) {
    var box = el("section", "by");
    box.id = "by" + (label ? "-" + label.toLowerCase() : "");
    var kinds = Object.keys(run.by || {});
    if (!kinds.length) return box;
    var bar = el("div", "by-pick");
    bar.appendChild(el("span", "kv", (label ? label + " · " : "") + "Where the time and the money went, by "));
    var table = el("table", "wf by-table");
    function show(kind) {
      Array.prototype.forEach.call(bar.querySelectorAll("button"), function (b) {
        b.setAttribute("aria-pressed", String(b.dataset.by === kind));
      });
      table.textContent = "";
      table.appendChild(el("caption", null, "Tokens, cost and time by " + kind));
      var head = el("tr");
      [kind, "steps", "in", "out", "cache read", "cache write", "cost", "%", "time", "%"].forEach(function (h) { head.appendChild(el("th", null, h)); });
      var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
      var groups = run.by[kind];
      var cost0 = 0, ms0 = 0;
      groups.forEach(function (g) { cost0 += g.cost_usd || 0; ms0 += g.ms || 0; });
      var body = el("tbody");
      groups.forEach(function (g) {
        var tr = el("tr", "by-row");
        var t = g.tokens || {};
        [g.key, num(g.steps), num(t.input), num(t.output), num(t.cache_read),
          num((t.cache_write_5m || 0) + (t.cache_write_1h || 0)), cost(g.cost_usd),
          cost0 && g.cost_usd ? Math.round(100 * g.cost_usd / cost0) + "%" : "",
          secs(g.ms), ms0 ? Math.round(100 * g.ms / ms0) + "%" : ""].forEach(function (v, i) {
          tr.appendChild(el("td", i ? "t" : "l", v));
        });
        body.appendChild(tr);
      });
      table.appendChild(body);
    }
    kinds.forEach(function (kind) {
      var b = el("button", "by-kind", kind);
      b.dataset.by = kind;
      b.addEventListener("click", function () { show(kind); });
      bar.appendChild(b);
    });
    box.appendChild(bar);
    box.appendChild(table);
    show(kinds[0]);
    return box;
  }

  var top = el("header");
  top.appendChild(header(DATA.a, TWO ? "A" : ""));
  if (TWO) top.appendChild(header(DATA.b, "B"));
  var falls = el("div", "waterfalls");
  falls.appendChild(waterfall(DATA.a, TWO ? "A" : ""));
  if (TWO) falls.appendChild(waterfall(DATA.b, "B"));
  falls.appendChild(byTable(DATA.a, TWO ? "A" : ""));
  if (TWO) falls.appendChild(byTable(DATA.b, "B"));
  var main = el("main");
  main.appendChild(timeline);
  main.appendChild(detail);
  app.textContent = "";
  app.appendChild(top);
  app.appendChild(falls);
  app.appendChild(main);
  more();
  if (!rows.length) timeline.appendChild(el("div", "hint", "No steps."));
  var m = /^#step-(\d+)$/.exec(location.hash);
  if (m) select(Number(m[1]));
  document.body.dataset.ready = "1";
})();
