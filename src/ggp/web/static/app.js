// ggp web: the play/watch page and the replay viewer. No dependencies, no build step.
"use strict";

(() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const same = (a, b) => !!a && !!b && a[0] === b[0] && a[1] === b[1];
  const DIR_KEYS = { ArrowUp: "north", ArrowDown: "south", ArrowLeft: "west", ArrowRight: "east", ".": "stay" };
  const DIR_BUTTONS = [
    ["north", "↑", "north (↑)"],
    ["west", "←", "west (←)"],
    ["stay", "·", "stay (.)"],
    ["east", "→", "east (→)"],
    ["south", "↓", "south (↓)"],
  ];

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  async function api(method, url, body) {
    const opts = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const reply = await fetch(url, opts);
    let data = null;
    try {
      data = await reply.json();
    } catch (e) {
      data = { detail: `${reply.status} ${reply.statusText}` };
    }
    return { ok: reply.ok, status: reply.status, data };
  }

  // --- board overlays: highlight cells by their data-cell="x y" rectangles -----------------------
  function clearMarks(board) {
    board.querySelectorAll(".hl").forEach((n) => n.remove());
  }

  function mark(board, xy, cls) {
    const rect = board.querySelector(`[data-cell="${xy[0]} ${xy[1]}"]`);
    const svg = board.querySelector("svg");
    if (!rect || !svg) return;
    const o = document.createElementNS(SVGNS, "rect");
    for (const a of ["x", "y", "width", "height"]) o.setAttribute(a, rect.getAttribute(a));
    o.setAttribute("class", `hl ${cls}`);
    svg.appendChild(o);
  }

  function cellOf(ev) {
    const rect = ev.target.closest && ev.target.closest("[data-cell]");
    return rect ? rect.getAttribute("data-cell").split(" ").map(Number) : null;
  }

  // --- the play / watch page ----------------------------------------------------------------------
  function playPage() {
    const id = document.body.dataset.gameId;
    const family = document.body.dataset.family;
    const board = $("board");
    let view = JSON.parse($("initial-view").textContent);
    let role = null; // the human role the controls act for
    let selected = null; // Amazons: the amazon picked to move
    let sending = false;
    let thinkingFrom = null; // {role: performance.now() at which it started}
    let events = null;

    const legal = () => (role && view.legal[role]) || [];

    function say(text, kind = "error") {
      const m = $("message");
      m.hidden = !text;
      m.textContent = text || "";
      m.className = `message ${kind}`;
    }

    async function submit(move) {
      if (sending || !role) return;
      sending = true;
      document.body.dataset.sending = "true"; // keys are ignored until the move is in
      say("");
      const r = await api("POST", `/api/games/${id}/moves?svg=1`, { role, move, step: view.step });
      sending = false;
      delete document.body.dataset.sending;
      selected = null;
      if (r.ok) render(r.data);
      else {
        say(r.data.detail || `error ${r.status}`);
        highlight();
      }
    }

    function describeTurn() {
      if (view.terminal) return "Game over";
      const s = view.state;
      const parts = [];
      const doing = view.to_act.filter((r) => !view.submitted.includes(r) || view.awaiting.includes(r));
      if (family === "amazons") {
        const who = s.to_act;
        const what = s.phase === "move" ? "to move an amazon" : `to fire an arrow from (${s.just_moved.join(", ")})`;
        parts.push(`${who} ${what}`);
      } else if (view.to_act.length > 1) {
        parts.push(`${view.to_act.join(" and ")} move together`);
      } else if (view.to_act.length === 1) {
        parts.push(`${view.to_act[0]} to move`);
      }
      const done = view.submitted.filter((r) => view.to_act.includes(r));
      if (done.length && view.awaiting.length) parts.push(`${done.join(", ")} ready; waiting for ${view.awaiting.join(", ")}`);
      if (!doing.length && !view.awaiting.length && !Object.keys(view.thinking).length) parts.push("…");
      return parts.join(" · ");
    }

    function renderRolePick() {
      const box = $("role-pick");
      box.replaceChildren();
      const humans = view.awaiting;
      box.hidden = humans.length < 2;
      if (humans.length < 2) return;
      box.append(el("span", { class: "label" }, "moving for "));
      for (const r of humans) {
        box.append(
          el(
            "button",
            {
              class: r === role ? "chip on" : "chip",
              onclick: () => {
                role = r;
                selected = null;
                renderControls();
                renderRolePick();
              },
            },
            r,
          ),
        );
      }
    }

    function renderControls() {
      const box = $("controls");
      box.replaceChildren();
      const moves = legal();
      if (!role || !moves.length) {
        highlight();
        renderLegalList();
        return;
      }
      box.append(el("div", { class: "you" }, `Your move as `, el("b", {}, role)));
      if (family === "bomberman" || family === "wallmaze") {
        const pad = el("div", { class: "dpad" });
        for (const [dir, glyph, title] of DIR_BUTTONS) {
          const m = moves.find((mv) => mv.dir === dir);
          pad.append(
            el(
              "button",
              {
                class: `dir dir-${dir}`,
                "data-dir": dir,
                title,
                disabled: !m,
                onclick: () => m && submit(m.move),
              },
              glyph,
            ),
          );
        }
        box.append(pad);
        if (family === "bomberman") {
          const bomb = moves.find((mv) => mv.kind === "bomb");
          box.append(
            el(
              "button",
              { class: "bomb", id: "drop-bomb", disabled: !bomb, onclick: () => bomb && submit(bomb.move) },
              "drop bomb (space)",
            ),
          );
        }
      } else if (family === "amazons") {
        const fire = moves.some((m) => m.kind === "fire");
        box.append(
          el(
            "p",
            { class: "hint" },
            fire
              ? "Click a green square to shoot the arrow."
              : selected
                ? `Amazon at (${selected.join(", ")}) picked: click a green square to move it there (or another amazon).`
                : "Click one of your amazons (green) to pick it.",
          ),
        );
      }
      highlight();
      renderLegalList();
    }

    function renderLegalList() {
      const box = $("legal-moves");
      box.replaceChildren();
      const moves = legal();
      $("legal-list").hidden = !moves.length;
      const summary = $("legal-list").querySelector("summary");
      summary.textContent = `legal moves${role ? ` of ${role}` : ""} (${moves.length})`;
      for (const m of moves) box.append(el("button", { class: "move", onclick: () => submit(m.move) }, m.move));
    }

    function highlight() {
      clearMarks(board);
      if (family === "amazons" && view.last_joint) {
        // the last move's squares, faintly: where an amazon came from and went, or where the arrow fell
        for (const m of Object.values(view.last_joint)) {
          const nums = (m.match(/\d+/g) || []).map(Number);
          for (let i = 0; i + 1 < nums.length; i += 2) mark(board, [nums[i], nums[i + 1]], "last");
        }
      }
      if (view.terminal) return;
      const moves = legal();
      if (family === "amazons") {
        const fire = moves.filter((m) => m.kind === "fire");
        if (view.state.just_moved) mark(board, view.state.just_moved, "sel");
        if (fire.length) {
          fire.forEach((m) => mark(board, m.to, "target"));
          return;
        }
        if (selected) {
          mark(board, selected, "sel");
          moves.filter((m) => same(m.from, selected)).forEach((m) => mark(board, m.to, "target"));
        } else {
          const seen = new Set();
          for (const m of moves) {
            if (m.from && !seen.has(m.from.join())) {
              seen.add(m.from.join());
              mark(board, m.from, "from");
            }
          }
        }
      } else {
        for (const m of moves) {
          if (m.kind === "step" && m.dir !== "stay") mark(board, m.to, "target");
        }
      }
    }

    function renderThinking() {
      const box = $("thinking");
      const roles = Object.keys(view.thinking);
      box.hidden = !roles.length || view.terminal;
      thinkingFrom = {};
      const now = performance.now();
      for (const r of roles) thinkingFrom[r] = now - 1000 * view.thinking[r];
      if (roles.length) {
        $("thinking-text").textContent = `${roles.map((r) => `${r} (${view.players[r]})`).join(", ")} thinking…`;
        requestAnimationFrame(tick);
      }
    }

    function tick() {
      if (!thinkingFrom || !Object.keys(thinkingFrom).length || $("thinking").hidden) return;
      const started = Math.min(...Object.values(thinkingFrom));
      const frac = Math.min(1, (performance.now() - started) / (1000 * view.settings.agent_time));
      $("thinking-bar").style.width = `${(100 * frac).toFixed(1)}%`;
      requestAnimationFrame(tick);
    }

    function renderResult() {
      const box = $("result");
      box.hidden = !view.terminal;
      if (!view.terminal) return;
      const goals = view.goals;
      const values = Object.values(goals);
      const best = Math.max(...values);
      const winners = Object.keys(goals).filter((r) => goals[r] === best);
      $("result-title").textContent =
        winners.length === 1 ? `Game over: ${winners[0]} wins` : winners.length === values.length ? "Game over: a draw" : "Game over";
      const list = $("result-goals");
      list.replaceChildren();
      for (const [r, v] of Object.entries(goals)) {
        list.append(el("li", { class: v === best && winners.length === 1 ? "winner" : "" }, el("b", {}, r), ` (${view.players[r]}): ${v}`));
      }
      if (events) {
        events.close();
        events = null;
      }
    }

    function renderLast() {
      const box = $("last");
      box.replaceChildren();
      if (!view.last_joint) return;
      box.append("last step: ");
      for (const [r, m] of Object.entries(view.last_joint)) {
        if (m === "noop" && view.roles.length > 1 && Object.values(view.last_joint).some((x) => x !== "noop")) continue;
        box.append(el("span", { class: "lastmove" }, el("b", {}, r), " ", m));
      }
    }

    function render(next) {
      if (next.version < view.version) return;
      const fresh = next.version !== view.version || !board.dataset.version;
      view = next;
      if (fresh && next.svg) board.innerHTML = next.svg;
      board.dataset.version = String(view.version);
      board.dataset.step = String(view.step);
      $("step").textContent = String(view.step);
      $("counter").textContent = view.state.step === undefined ? "" : `(rule sheet's step counter: ${view.state.step})`;
      $("turn").textContent = describeTurn();
      if (!view.awaiting.includes(role)) {
        role = view.awaiting[0] || null;
        selected = null;
      }
      renderRolePick();
      renderControls();
      renderThinking();
      renderResult();
      renderLast();
      const notes = $("notes");
      notes.replaceChildren(...view.notes.map((n) => el("li", {}, n)));
    }

    board.addEventListener("click", (ev) => {
      const xy = cellOf(ev);
      const moves = legal();
      if (!xy || !moves.length || sending) return;
      if (family === "amazons") {
        const fire = moves.filter((m) => m.kind === "fire");
        if (fire.length) {
          const m = fire.find((f) => same(f.to, xy));
          if (m) submit(m.move);
          else say("Shoot the arrow at one of the green squares.", "info");
          return;
        }
        if (selected) {
          const m = moves.find((mv) => same(mv.from, selected) && same(mv.to, xy));
          if (m) return void submit(m.move);
        }
        if (moves.some((mv) => same(mv.from, xy))) selected = same(selected, xy) ? null : xy;
        else selected = null;
        say("");
        renderControls();
      } else {
        const m = moves.find((mv) => mv.kind === "step" && mv.dir !== "stay" && same(mv.to, xy));
        if (m) submit(m.move);
      }
    });

    document.addEventListener("keydown", (ev) => {
      if (ev.target.closest && ev.target.closest("input, select, textarea")) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (family !== "bomberman" && family !== "wallmaze") {
        if (ev.key === "Escape" && selected) {
          selected = null;
          renderControls();
        }
        return;
      }
      let m = null;
      if (ev.key in DIR_KEYS) m = legal().find((mv) => mv.dir === DIR_KEYS[ev.key]);
      else if (ev.key === " " || ev.key === "b") m = legal().find((mv) => mv.kind === "bomb");
      else return;
      ev.preventDefault();
      if (m) submit(m.move);
      else if (role) say(`That move is not legal for ${role} now.`, "info");
    });

    function connect() {
      if (view.terminal || !window.EventSource) return;
      events = new EventSource(`/api/games/${id}/events`);
      events.addEventListener("update", (e) => render(JSON.parse(e.data)));
    }

    board.dataset.version = "";
    render(view);
    connect();
  }

  // --- the replay viewer -----------------------------------------------------------------------------
  function replayPage() {
    const id = document.body.dataset.gameId;
    const total = Number(document.body.dataset.steps);
    const board = $("board");
    const slider = $("slider");
    const cache = new Map();
    let current = 0;
    let timer = null;
    let moves = [];

    async function fetchStep(k) {
      if (!cache.has(k)) cache.set(k, fetch(`/api/games/${id}/steps/${k}`).then((r) => r.json()));
      return cache.get(k);
    }

    async function show(k) {
      k = Math.max(0, Math.min(total, k));
      current = k;
      slider.value = String(k);
      $("replay-step").textContent = String(k);
      const d = await fetchStep(k);
      if (current !== k) return;
      board.innerHTML = d.svg;
      board.dataset.step = String(k);
      const joint = d.joint ? Object.entries(d.joint).map(([r, m]) => `${r} ${m}`).join(" · ") : "initial state";
      $("replay-joint").textContent = joint;
      $("replay-result").textContent = d.terminal
        ? `game over: ${Object.entries(d.goals).map(([r, v]) => `${r} ${v}`).join(", ")}`
        : "";
      document.querySelectorAll("#move-list li").forEach((li, i) => li.classList.toggle("current", i + 1 === k));
      const li = document.querySelector("#move-list li.current");
      if (li) li.scrollIntoView({ block: "nearest" });
      if (k < total) fetchStep(k + 1);
    }

    function setPlaying(on) {
      if (timer) clearInterval(timer);
      timer = null;
      $("playpause").textContent = on ? "❚❚ pause" : "▶ play";
      if (!on) return;
      if (current >= total) show(0);
      timer = setInterval(() => {
        if (current >= total) setPlaying(false);
        else show(current + 1);
      }, 600);
    }

    slider.addEventListener("input", () => show(Number(slider.value)));
    $("first").onclick = () => show(0);
    $("prev").onclick = () => show(current - 1);
    $("next").onclick = () => show(current + 1);
    $("last-step").onclick = () => show(total);
    $("playpause").onclick = () => setPlaying(!timer);
    document.addEventListener("keydown", (ev) => {
      if (ev.target === slider && (ev.key === "ArrowLeft" || ev.key === "ArrowRight")) {
        return; // the slider moves itself and fires input
      }
      const keys = {
        ArrowLeft: () => show(current - 1),
        ArrowRight: () => show(current + 1),
        Home: () => show(0),
        End: () => show(total),
        " ": () => setPlaying(!timer),
      };
      if (keys[ev.key]) {
        ev.preventDefault();
        keys[ev.key]();
      }
    });

    fetch(`/api/games/${id}/record`)
      .then((r) => r.json())
      .then((rec) => {
        moves = (rec.moves || []).map((m) => m.joint);
        const list = $("move-list");
        moves.forEach((joint, i) => {
          const text = joint.map((m, j) => `${rec.roles[j]} ${m}`).filter((t) => !t.endsWith(" noop") || joint.every((m) => m === "noop"));
          list.append(el("li", { onclick: () => show(i + 1) }, text.join(" · ")));
        });
        show(current);
      });
    show(0);
  }

  const page = document.body.dataset.page;
  if (page === "play") playPage();
  else if (page === "replay") replayPage();
})();
