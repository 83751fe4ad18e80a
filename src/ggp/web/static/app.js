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

  // The moves as numbered turns (the list's own numbers), each ply with its rule text on hover; ``go`` (the
  // replay) makes a turn, and each of its plies, a link to its last step.
  function turnItems(turns, go) {
    return turns.map((t) => {
      const steps = t.plies.flatMap((p) => p.steps);
      const li = el("li", { "data-step": String(Math.max(...steps)), "data-steps": steps.join(" ") });
      if (go) li.addEventListener("click", () => go(Math.max(...steps)));
      t.plies.forEach((p, i) => {
        if (i) li.append(" ");
        const label = [el("b", {}, p.role), " ", p.text, p.forced ? " (forced)" : ""];
        const span = el("span", { class: "mv", title: p.moves.join(" "), "data-steps": p.steps.join(" ") }, ...label);
        if (go) {
          span.addEventListener("click", (e) => {
            e.stopPropagation();
            go(Math.max(...p.steps));
          });
        }
        li.append(span);
      });
      return li;
    });
  }

  // Move sounds: off until the player turns them on (the choice is kept in this browser).
  let audio = null;
  function tick() {
    if (localStorage.getItem("ggp-sound") !== "on") return;
    try {
      audio = audio || new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = 660;
      gain.gain.setValueAtTime(0.08, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.12);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.12);
    } catch (e) {
      // no sound on this browser: the move still shows
    }
  }

  function soundToggle() {
    const box = $("sound");
    if (!box) return;
    box.checked = localStorage.getItem("ggp-sound") === "on";
    box.addEventListener("change", () => localStorage.setItem("ggp-sound", box.checked ? "on" : "off"));
  }

  // Thrown when the server cannot be reached (no answer at all), as opposed to an answer with an error status.
  class Unreachable extends Error {}

  async function api(method, url, body, timeoutMs = 20000) {
    const opts = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    if (window.AbortSignal && AbortSignal.timeout) opts.signal = AbortSignal.timeout(timeoutMs);
    let reply;
    try {
      reply = await fetch(url, opts);
    } catch (e) {
      throw new Unreachable(String(e));
    }
    let data = null;
    try {
      data = await reply.json();
    } catch (e) {
      data = { detail: `${reply.status} ${reply.statusText}` };
    }
    return { ok: reply.ok, status: reply.status, data };
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // --- live updates: one event stream per browser, shared by its tabs -------------------------------
  // A browser allows six connections per host, so a stream per tab would lock the app from the seventh tab
  // on. The tab that holds the Web Lock "ggp-events" leads: it keeps one EventSource on
  // /api/events?games=a,b,... for the games every tab follows, and relays what it hears over a
  // BroadcastChannel. When the leader closes, the browser gives the lock to another tab, which asks every
  // tab what it follows and opens the stream again. Without Web Locks or BroadcastChannel each tab keeps
  // its own stream, closed while the tab is hidden.
  function makeHub() {
    const tab = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    const handlers = new Map(); // game id -> Set of functions called with each view
    const statusFns = new Set(); // functions called with true (connected) or false (cannot reach the server)
    const shared = !!(window.BroadcastChannel && navigator.locks && navigator.locks.request);
    const channel = shared ? new BroadcastChannel("ggp-events") : null;
    let leader = null;

    function deliver(msg) {
      if (msg.type === "update") (handlers.get(msg.game) || new Set()).forEach((fn) => fn(msg.view));
      else if (msg.type === "status") statusFns.forEach((fn) => fn(msg.online));
      else if (msg.type === "who") announce();
      else if (leader && msg.type === "want") leader.want(msg.tab, msg.games);
      else if (leader && msg.type === "bye") leader.want(msg.tab, []);
    }

    // heard by this tab and, through the channel, by every other tab of this browser
    function publish(msg) {
      if (channel) channel.postMessage(msg);
      deliver(msg);
    }

    function announce() {
      const games = [...handlers.keys()];
      if (channel) channel.postMessage({ type: "want", tab, games });
      if (leader) leader.want(tab, games);
    }

    // One EventSource for a set of games; reopened when a game it lacks is wanted.
    function makeStream(onView, onStatus) {
      let source = null;
      let key = "";
      let retry = null;
      const done = new Set(); // games seen finished: the server sends their last view and drops them
      const self = {
        follow(games) {
          const live = [...new Set(games)].filter((g) => !done.has(g)).sort().slice(-100);
          const have = new Set(key ? key.split(",") : []);
          if (source && live.every((g) => have.has(g))) return; // extra games on the stream do no harm
          if (source) source.close();
          source = null;
          key = live.join(",");
          if (!live.length) return;
          const es = new EventSource(`/api/events?games=${encodeURIComponent(key)}`);
          source = es;
          es.addEventListener("update", (e) => {
            const view = JSON.parse(e.data);
            if (view.terminal) done.add(view.id);
            onView(view);
          });
          es.addEventListener("gone", (e) => done.add(JSON.parse(e.data).id));
          es.addEventListener("end", () => {
            es.close();
            if (source === es) {
              source = null;
              key = "";
            }
          });
          es.onopen = () => onStatus(true);
          es.onerror = () => {
            if (source !== es) return;
            onStatus(false);
            // network errors are retried by the EventSource itself; an error answer closes it for good
            if (es.readyState === EventSource.CLOSED && !retry) {
              retry = setTimeout(() => {
                retry = null;
                if (source === es) {
                  source = null;
                  self.follow(live);
                }
              }, 3000);
            }
          };
        },
        close() {
          if (source) source.close();
          source = null;
          key = "";
        },
      };
      return self;
    }

    function becomeLeader() {
      const wants = new Map(); // tab -> the games it follows
      const stream = makeStream(
        (view) => publish({ type: "update", game: view.id, view }),
        (online) => publish({ type: "status", online }),
      );
      let pending = null;
      leader = {
        want(from, games) {
          if (games.length) wants.set(from, games);
          else wants.delete(from);
          if (!pending) {
            // gather the answers of several tabs into one (re)connection
            pending = setTimeout(() => {
              pending = null;
              stream.follow([...wants.values()].flat());
            }, 50);
          }
        },
      };
      leader.want(tab, [...handlers.keys()]);
      channel.postMessage({ type: "who" });
    }

    if (shared) {
      channel.onmessage = (e) => deliver(e.data);
      // the lock is held for the life of the page: the promise never settles
      navigator.locks.request("ggp-events", () => new Promise(() => becomeLeader()));
      window.addEventListener("pagehide", () => channel.postMessage({ type: "bye", tab }));
    } else {
      const stream = makeStream(
        (view) => deliver({ type: "update", game: view.id, view }),
        (online) => deliver({ type: "status", online }),
      );
      const sync = () => (document.hidden ? stream.close() : stream.follow([...handlers.keys()]));
      document.addEventListener("visibilitychange", sync);
      leader = { want: () => sync() };
    }

    return {
      follow(game, fn) {
        if (!handlers.has(game)) handlers.set(game, new Set());
        handlers.get(game).add(fn);
        announce();
      },
      onStatus(fn) {
        statusFns.add(fn);
      },
    };
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

  // The piece that the last step brought to a cell grows into place (see .arrived in the style sheet).
  function arrive(board, xy) {
    const rect = board.querySelector(`[data-cell="${xy[0]} ${xy[1]}"]`);
    if (!rect) return;
    const [x, y] = ["x", "y"].map((a) => Number(rect.getAttribute(a)));
    const [w, h] = ["width", "height"].map((a) => Number(rect.getAttribute(a)));
    for (const node of board.querySelectorAll("svg circle, svg text")) {
      const cx = Number(node.getAttribute(node.tagName === "circle" ? "cx" : "x"));
      const cy = Number(node.getAttribute(node.tagName === "circle" ? "cy" : "y"));
      if (cx >= x && cx <= x + w && cy >= y && cy <= y + h) node.classList.add("arrived");
    }
  }

  function cellOf(ev) {
    const rect = ev.target.closest && ev.target.closest("[data-cell]");
    return rect ? rect.getAttribute("data-cell").split(" ").map(Number) : null;
  }

  // --- the play / watch page ----------------------------------------------------------------------
  function playPage(hub) {
    const id = document.body.dataset.gameId;
    // how the board takes moves: the family view's scheme (move-and-shoot, directions), grid, or list
    const controls = document.body.dataset.controls;
    const buttons = JSON.parse(document.body.dataset.buttons || "{}"); // more buttons of the direction pad, by move kind
    const board = $("board");
    let view = JSON.parse($("initial-view").textContent);
    let mine = new Set(view.mine || []); // the seats this browser owns (its cookie holds their tokens)
    let role = null; // the human role the controls act for
    let selected = null; // Amazons: the amazon picked to move; a grid game: the square picked first
    let dest = null; // Amazons: the destination picked, not sent until the arrow is chosen
    let cursor = null; // the keyboard's square [x, y] (Amazons) or [i, j] (a rule sheet's grid)
    let announced = -1; // the last step told to screen readers
    let sending = false;
    let thinkingFrom = null; // {role: performance.now() at which it started}
    let queued = null; // a move made while the server could not be reached: sent when it is back
    let offline = false;
    let probing = false;
    let confirming = null; // the action button waiting for its second click

    const legal = () => (role && view.legal[role]) || [];
    const OFFLINE = "Cannot reach the server; retrying…";

    function say(text, kind = "error") {
      const m = $("message");
      m.hidden = !text;
      m.textContent = text || "";
      m.className = `message ${kind}`;
    }

    // The server did not answer: say so, keep taking input, and look for it until it is back.
    function lost(text) {
      offline = true;
      document.body.dataset.offline = "true";
      say(text || OFFLINE);
      if (!probing) probe();
    }

    async function probe() {
      probing = true;
      for (let delay = 500; offline; delay = Math.min(2 * delay, 4000)) {
        await sleep(delay);
        let r;
        try {
          r = await api("GET", `/api/games/${id}?svg=1`, undefined, 5000);
        } catch (e) {
          continue;
        }
        if (r.status >= 500) continue;
        found(r.ok ? r.data : null);
      }
      probing = false;
    }

    function found(fresh) {
      if (!offline) return;
      offline = false;
      delete document.body.dataset.offline;
      say("");
      if (fresh) render(fresh);
      const q = queued;
      queued = null;
      if (q && q.step === view.step && view.awaiting.includes(q.role) && mine.has(q.role)) {
        role = q.role;
        submit(q.move);
      }
    }

    async function submit(move) {
      if (sending || !role) return;
      const want = { role, move, step: view.step };
      sending = true;
      document.body.dataset.sending = "true"; // keys are ignored until the move is in
      if (!offline) say("");
      let r = null;
      try {
        r = await api("POST", `/api/games/${id}/moves?svg=1`, want);
      } catch (e) {
        if (!(e instanceof Unreachable)) throw e;
      } finally {
        sending = false;
        delete document.body.dataset.sending;
      }
      selected = null;
      dest = null;
      if (r === null) {
        queued = want; // the latest move wins
        lost(`Cannot reach the server: your move ${move} is sent when it is back; retrying…`);
        highlight();
        return;
      }
      queued = null;
      if (offline) found(null);
      if (r.ok) render(r.data);
      else {
        say(r.data.detail || `error ${r.status}`);
        highlight();
      }
    }

    // Amazons: the move, then at once the arrow (the server plays a forced arrow itself, and says so).
    async function submitWithArrow(move, arrow) {
      const before = view.step;
      await submit(move);
      if (view.step === before) return; // refused: the message says why
      const fire = legal().find((m) => m.kind === "fire" && same(m.to, arrow));
      if (fire) await submit(fire.move);
    }

    // The squares a queen reaches from ``from`` in straight lines over empty squares (``gone`` counts as empty).
    function queenLines(from, gone) {
      const rows = (view.state.board || "").split("/");
      const n = rows.length;
      const empty = (x, y) =>
        x >= 1 && y >= 1 && x <= n && y <= n && (rows[n - y][x - 1] === "." || (gone && gone[0] === x && gone[1] === y));
      const out = [];
      for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [1, -1], [-1, 1], [-1, -1]]) {
        for (let x = from[0] + dx, y = from[1] + dy; empty(x, y); x += dx, y += dy) out.push([x, y]);
      }
      return out;
    }

    // POST an action (take a seat, resign, abort) and show the match as it answers.
    async function act(method, url, body, after) {
      let r;
      try {
        r = await api(method, url, body);
      } catch (e) {
        if (!(e instanceof Unreachable)) throw e;
        return lost();
      }
      if (!r.ok) return say(r.data.detail || `error ${r.status}`);
      say("");
      after(r.data);
    }

    function renderSeats() {
      const box = $("seats");
      box.replaceChildren();
      const seats = view.seats || {};
      const open = Object.keys(seats).filter((r) => seats[r] === "open");
      document.querySelectorAll("[data-open-seat]").forEach((n) => (n.hidden = seats[n.dataset.openSeat] !== "open"));
      $("watching").hidden = mine.size > 0;
      if (mine.size) box.append(el("span", { class: "label" }, `you play ${[...mine].join(", ")}`));
      // an open seat is offered to watchers: a player who has a seat keeps the other for the friend invited
      if (view.terminal || mine.size) return;
      for (const r of open) {
        box.append(
          el(
            "button",
            {
              class: "seat",
              "data-seat": r,
              onclick: () =>
                act("POST", `/api/games/${id}/seats/${encodeURIComponent(r)}`, {}, () => {
                  mine.add(r);
                  view.mine = [...mine]; // render takes the seats from the view it draws
                  render(view, true);
                }),
            },
            `play as ${r}`,
          ),
        );
      }
    }

    // A button that asks "sure?" on its first click and acts on the second.
    function twoStep(name, label, confirmLabel, action) {
      const armed = confirming === name;
      return el(
        "button",
        {
          class: armed ? "action armed" : "action",
          id: `action-${name}`,
          onclick: () => {
            if (confirming !== name) {
              confirming = name;
              renderActions();
              return;
            }
            confirming = null;
            action();
          },
        },
        armed ? confirmLabel : label,
      );
    }

    function renderActions() {
      const box = $("actions");
      box.replaceChildren();
      const owned = [...mine];
      const humans = Object.values(view.seats || {}).some((s) => s !== "agent");
      if (!view.terminal && owned.length) {
        const who = role && mine.has(role) ? role : owned[0];
        box.append(
          twoStep("resign", `resign as ${who}`, `really resign as ${who}?`, () =>
            act("POST", `/api/games/${id}/resign`, { role: who }, (data) => render(data)),
          ),
        );
        const people = Object.values(view.players).every((p) => p === "human");
        const offers = view.draw_offers || [];
        if (people && view.roles.length > 1 && !offers.includes(who)) {
          const label = offers.length ? `accept the draw (${offers.join(", ")} offers it)` : "offer a draw";
          box.append(
            el(
              "button",
              {
                class: "action",
                id: "action-draw",
                onclick: () => act("POST", `/api/games/${id}/draw`, { role: who }, (data) => render(data)),
              },
              label,
            ),
          );
        } else if (people && offers.includes(who)) {
          box.append(el("span", { class: "muted", id: "draw-offered" }, "you offered a draw"));
        }
        const computer = Object.values(view.seats || {}).includes("agent");
        if (computer && owned.length === 1 && view.step > 0) {
          const takeBack = () => act("POST", `/api/games/${id}/takeback`, { role: who }, (data) => render(data, true));
          box.append(el("button", { class: "action", id: "action-takeback", onclick: takeBack }, "take back"));
        }
        if (view.step === 0) {
          box.append(
            twoStep("abort", "abort the game", "really abort it?", () =>
              act("POST", `/api/games/${id}/abort`, {}, (data) => render(data)),
            ),
          );
        }
      }
      if (view.terminal && view.ended !== "aborted" && (owned.length || !humans)) {
        const label = view.rematch && !owned.length ? "watch the rematch" : view.rematch ? "join the rematch" : "rematch (sides swapped)";
        box.append(
          el(
            "button",
            {
              class: "action primary-action",
              id: "action-rematch",
              onclick: () =>
                act("POST", `/api/games/${id}/rematch`, {}, (data) => {
                  window.location.href = `/games/${data.id}`;
                }),
            },
            label,
          ),
        );
      }
      if (view.terminal && (owned.length || !humans)) {
        box.append(
          twoStep("delete", "delete this game", "really delete it for good?", () =>
            act("DELETE", `/api/games/${id}`, undefined, () => {
              window.location.href = "/games";
            }),
          ),
        );
      }
    }

    function describeTurn() {
      if (view.terminal) return "Game over";
      const parts = [];
      const doing = view.to_act.filter((r) => !view.submitted.includes(r) || view.awaiting.includes(r));
      if (view.turn) {
        parts.push(view.turn);
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
      const humans = view.awaiting.filter((r) => mine.has(r));
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
      if (controls === "directions") {
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
        for (const [kind, label] of Object.entries(buttons)) {
          const m = moves.find((mv) => mv.kind === kind);
          box.append(
            el("button", { class: kind, id: `move-${kind}`, disabled: !m, onclick: () => m && submit(m.move) }, label),
          );
        }
      } else if (controls === "move-and-shoot") {
        const fire = moves.some((m) => m.kind === "fire");
        box.append(
          el(
            "p",
            { class: "hint" },
            fire
              ? "Click a green square to shoot the arrow."
              : dest
                ? `Moving ${sq(selected)} to ${sq(dest)}: now click a green square to shoot the arrow (click ${sq(dest)} again or press Esc to take the move back).`
                : selected
                  ? `Amazon at ${sq(selected)} picked: click a green square to move it there (or another amazon).`
                  : "Click one of your amazons (green) to pick it.",
          ),
        );
      } else if (controls === "grid") {
        box.append(
          el(
            "p",
            { class: "hint" },
            selected ? "Square picked: click where it goes (green), or pick a move below." : "Click a green square, or pick a move from the list below.",
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
      for (const m of moves) box.append(el("button", { class: "move", title: m.move, onclick: () => submit(m.move) }, m.readable || m.move));
    }

    function highlight() {
      clearMarks(board);
      if (controls === "move-and-shoot") lastAmazonsMove();
      else
        (view.last_cells || []).forEach((xy, k) => {
          mark(board, xy, "last");
          if (k % 2) arrive(board, xy); // (the cells come in pairs: where a piece stood, where it went)
        });
      if (view.terminal) cursor = null; // the game is over: no square is being pointed at any more
      if (cursor) markCursor();
      if (view.terminal) return;
      const moves = legal();
      if (controls === "grid") return highlightGrid(moves);
      if (controls === "move-and-shoot") {
        const fire = moves.filter((m) => m.kind === "fire");
        if (view.state.just_moved) mark(board, view.state.just_moved, "sel");
        if (fire.length) {
          fire.forEach((m) => mark(board, m.to, "target"));
          return;
        }
        if (dest) {
          mark(board, selected, "from");
          mark(board, dest, "sel");
          queenLines(dest, selected).forEach((xy) => mark(board, xy, "target arrow"));
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

    const sq = (xy) => String.fromCharCode(96 + xy[0]) + xy[1];

    // The last amazon move of either side: a line from where it stood to where it went, and the arrow's square.
    function lastAmazonsMove() {
      const svg = board.querySelector("svg");
      if (!svg || !view.moves || !view.moves.length) return;
      let move = null;
      let arrow = null;
      for (let k = view.moves.length - 1; k >= 0 && !move; k--) {
        for (const text of Object.values(view.moves[k].joint)) {
          const nums = (text.match(/\d+/g) || []).map(Number);
          if (text.startsWith("(move") && nums.length === 4) move = nums;
          else if (text.startsWith("(fire") && nums.length === 2 && !arrow) arrow = nums;
        }
      }
      if (arrow) mark(board, arrow, "last arrow-last");
      if (!move) return;
      mark(board, [move[0], move[1]], "last");
      mark(board, [move[2], move[3]], "last");
      arrive(board, [move[2], move[3]]);
      const a = board.querySelector(`[data-cell="${move[0]} ${move[1]}"]`);
      const b = board.querySelector(`[data-cell="${move[2]} ${move[3]}"]`);
      if (!a || !b) return;
      const c = (r, k) => Number(r.getAttribute(k)) + Number(r.getAttribute(k === "x" ? "width" : "height")) / 2;
      const line = document.createElementNS(SVGNS, "line");
      line.setAttribute("x1", c(a, "x"));
      line.setAttribute("y1", c(a, "y"));
      line.setAttribute("x2", c(b, "x"));
      line.setAttribute("y2", c(b, "y"));
      line.setAttribute("class", "hl last-line");
      svg.appendChild(line);
    }

    function gridCell(key) {
      return board.querySelector(`[data-gcell="${key}"]`);
    }

    function markGrid(key, cls) {
      const rect = gridCell(key);
      const svg = board.querySelector("svg");
      if (!rect || !svg) return;
      const o = document.createElementNS(SVGNS, "rect");
      for (const a of ["x", "y", "width", "height"]) o.setAttribute(a, rect.getAttribute(a));
      o.setAttribute("class", `hl ${cls}`);
      svg.appendChild(o);
    }

    function markCursor() {
      if (controls === "grid") markGrid(cursor.join(" "), "cursor");
      else mark(board, cursor, "cursor");
    }

    function highlightGrid(moves) {
      if (selected) {
        markGrid(selected, "sel");
        moves.filter((m) => m.cells.length > 1 && m.cells[0] === selected).forEach((m) => markGrid(m.cells[m.cells.length - 1], "target"));
        return;
      }
      const seen = new Set();
      for (const m of moves) {
        // a move naming a whole column (a drop) lights its last cell, a placement its cell; a piece's moves show
        // once it is picked, so the board is not lit all over
        const column = m.cells.length > 2 && m.cells.every((c) => c.split(" ")[0] === m.cells[0].split(" ")[0]);
        if (m.cells.length > 1 && !column) continue;
        const key = m.cells[m.cells.length - 1];
        if (key && !seen.has(key)) {
          seen.add(key);
          markGrid(key, "target");
        }
      }
    }

    // A click (or Enter) on square ``key`` of a rule sheet's grid.
    function gridClick(key) {
      const moves = legal();
      if (selected) {
        const m = moves.filter((mv) => mv.cells.length > 1 && mv.cells[0] === selected && mv.cells[mv.cells.length - 1] === key);
        if (m.length === 1) return void submit(m[0].move);
        if (m.length > 1) return void offer(m);
      }
      const single = moves.filter((mv) => mv.cells.length >= 1 && mv.cells.every((c) => c === mv.cells[0]) && mv.cells.includes(key));
      const column = moves.filter((mv) => mv.cells.length > 1 && !mv.cells.every((c) => c === mv.cells[0]) && mv.cells.includes(key) && mv.cells.every((c) => c.split(" ")[0] === mv.cells[0].split(" ")[0]) && mv.cells.length > 2);
      const starts = moves.filter((mv) => mv.cells.length > 1 && mv.cells[0] === key && !column.includes(mv));
      if (single.length + column.length === 1 && !starts.length) return void submit((single[0] || column[0]).move);
      if (starts.length) {
        selected = selected === key ? null : key;
        say("");
        return void renderControls();
      }
      if (single.length + column.length > 1) return void offer([...single, ...column]);
      selected = null;
      say("No legal move names that square.", "info");
      renderControls();
    }

    // Several legal moves fit the click: show just those in the legal list.
    function offer(moves) {
      $("legal-list").open = true;
      say(`${moves.length} moves fit: pick one below.`, "info");
      const box = $("legal-moves");
      box.replaceChildren(...moves.map((m) => el("button", { class: "move", title: m.move, onclick: () => submit(m.move) }, m.readable || m.move)));
    }

    function renderThinking() {
      const box = $("thinking");
      const roles = Object.keys(view.thinking);
      box.hidden = !roles.length || view.terminal;
      thinkingFrom = {};
      const now = performance.now();
      for (const r of roles) thinkingFrom[r] = now - 1000 * view.thinking[r];
      if (roles.length) {
        $("thinking-text").textContent = `${roles.map((r) => `${r} (${view.names[r]})`).join(", ")} thinking…`;
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

    // The people's clock: the server says how many seconds are left when it sent the view; counted down here
    // (in this page's own time, so that the two machines' clocks need not agree).
    let clockEnds = null;
    let clockTimer = null;
    function renderClock() {
      const box = $("clock");
      const running = view.clock && !view.terminal && view.clock.left !== null;
      box.hidden = !running;
      clockEnds = running ? performance.now() + 1000 * view.clock.left : null;
      if (running && clockTimer === null) clockTimer = setInterval(tickClock, 250);
      if (!running && clockTimer !== null) {
        clearInterval(clockTimer);
        clockTimer = null;
      }
      if (running) tickClock();
    }

    function tickClock() {
      if (clockEnds === null) return;
      const left = Math.max(0, Math.ceil((clockEnds - performance.now()) / 1000));
      $("clock-left").textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
      $("clock").classList.toggle("low", left <= 10);
    }

    function renderResult() {
      const box = $("result");
      box.hidden = !view.terminal;
      if (!view.terminal) return;
      const goals = view.goals || {};
      const values = Object.values(goals);
      const best = Math.max(...values);
      const winners = Object.keys(goals).filter((r) => goals[r] === best);
      $("result-title").textContent = view.outcome || "Game over";
      $("result-side").textContent = sideResult(goals, best, winners);
      const list = $("result-goals");
      list.replaceChildren();
      for (const [r, v] of Object.entries(goals)) {
        list.append(el("li", { class: v === best && winners.length === 1 ? "winner" : "" }, el("b", {}, r), ` (${view.names[r]}): ${v}`));
      }
    }

    // The result as the person at this screen sees it.
    function sideResult(goals, best, winners) {
      const own = [...mine];
      if (!own.length || view.ended === "aborted") return "";
      if (view.ended === "resigned" && view.result && own.some((r) => view.result.startsWith(`${r} resigned`))) return "You resigned.";
      const values = Object.values(goals);
      const ownBest = Math.max(...own.map((r) => goals[r] ?? 0));
      if (values.length && winners.length === values.length) return "A draw.";
      if (own.length === view.roles.length) return "";
      if (ownBest === best && winners.length === 1) return "You won!";
      if (ownBest === best) return "You shared the win.";
      return "You lost.";
    }

    function renderMoves() {
      const list = $("move-list");
      const moves = view.moves || [];
      list.replaceChildren(...turnItems(view.turns || [], null));
      list.scrollTop = list.scrollHeight;
      const said = moves.length ? moves[moves.length - 1] : null;
      if (said && said.step !== announced) {
        if (announced >= 0) {
          const words = Object.entries(said.readable).filter(([r]) => said.joint[r] !== "noop").map(([r, t]) => `${r} ${t}`);
          $("announce").textContent = `Step ${said.step}: ${words.join(", ") || "everyone waited"}.`;
        }
        if (announced >= 0) tick();
        announced = said.step;
      } else if (announced < 0) announced = 0;
    }

    function renderInvite() {
      const open = Object.keys(view.seats || {}).filter((r) => view.seats[r] === "open");
      const show = mine.size > 0 && open.length > 0 && !view.terminal;
      $("invite").hidden = !show;
      if (show) $("invite-link").value = window.location.href.split("#")[0];
    }

    function renderFacts() {
      if (!view.facts) return;
      $("facts").replaceChildren(...view.facts.map((f) => el("li", {}, f)));
    }

    function renderLast() {
      const box = $("last");
      box.replaceChildren();
      if (!view.last_joint) return;
      box.append("last step: ");
      const said = (view.moves || []).length ? view.moves[view.moves.length - 1].readable : {};
      for (const [r, m] of Object.entries(view.last_joint)) {
        if (m === "noop" && view.roles.length > 1 && Object.values(view.last_joint).some((x) => x !== "noop")) continue;
        box.append(el("span", { class: "lastmove", title: m }, el("b", {}, r), " ", said[r] || m));
      }
    }

    // A restarted server counts versions from 0 again: views of another server instance are ordered by step.
    const older = (next) => (next.epoch === view.epoch ? next.version < view.version : next.step < view.step);

    function render(next, force = false) {
      if (older(next)) return;
      // the same view again (a stream reconnecting): redrawing would only drop what the person is pointing at
      if (!force && !next.mine && next.epoch === view.epoch && next.version === view.version && board.dataset.version)
        return;
      if (next.mine) mine = new Set(next.mine);
      const fresh = next.version !== view.version || !board.dataset.version || force;
      view = next;
      if (fresh && next.svg) board.innerHTML = next.svg;
      board.dataset.version = String(view.version);
      board.dataset.step = String(view.step);
      $("step").textContent = String(view.step);
      // a board game seen from the second role's side, as a chess board is turned for black
      const board2 = (controls === "move-and-shoot" || controls === "grid") && view.roles.length === 2;
      board.classList.toggle("flipped", board2 && mine.size > 0 && !mine.has(view.roles[0]));
      $("turn").textContent = describeTurn();
      const mayMove = view.awaiting.filter((r) => mine.has(r));
      if (!mayMove.includes(role)) {
        role = mayMove[0] || null;
        selected = null;
        dest = null;
      }
      renderSeats();
      renderRolePick();
      renderControls();
      renderActions();
      renderThinking();
      renderClock();
      renderResult();
      renderLast();
      renderMoves();
      renderInvite();
      renderFacts();
      $("explain").replaceChildren(...(view.explain || []).map((t) => el("li", {}, t)));
      const notes = $("notes");
      notes.replaceChildren(...view.notes.map((n) => el("li", {}, n)));
    }

    function cellClick(xy) {
      const moves = legal();
      if (!xy || !moves.length || sending) return;
      if (controls === "move-and-shoot") {
        const fire = moves.filter((m) => m.kind === "fire");
        if (fire.length) {
          const m = fire.find((f) => same(f.to, xy));
          if (m) submit(m.move);
          else say("Shoot the arrow at one of the green squares.", "info");
          return;
        }
        if (dest) {
          if (same(dest, xy)) {
            dest = null; // taken back: pick another destination
            say("Move taken back: pick a destination.", "info");
            return void renderControls();
          }
          if (queenLines(dest, selected).some((t) => same(t, xy))) {
            const m = moves.find((mv) => same(mv.from, selected) && same(mv.to, dest));
            if (m) return void submitWithArrow(m.move, xy);
          }
          say("Shoot the arrow at one of the green squares, or click the destination again to take the move back.", "info");
          return;
        }
        if (selected) {
          const m = moves.find((mv) => same(mv.from, selected) && same(mv.to, xy));
          if (m) {
            dest = xy;
            say("");
            return void renderControls();
          }
        }
        if (moves.some((mv) => same(mv.from, xy))) selected = same(selected, xy) ? null : xy;
        else selected = null;
        say("");
        renderControls();
      } else {
        const m = moves.find((mv) => mv.kind === "step" && mv.dir !== "stay" && same(mv.to, xy));
        if (m) submit(m.move);
      }
    }

    board.addEventListener("click", (ev) => {
      if (controls === "grid") {
        const rect = ev.target.closest && ev.target.closest("[data-gcell]");
        if (rect && legal().length && !sending) {
          cursor = rect.getAttribute("data-gcell").split(" ").map(Number);
          gridClick(rect.getAttribute("data-gcell"));
        }
        return;
      }
      const xy = cellOf(ev);
      if (xy) cursor = xy;
      cellClick(xy);
    });

    // The cursor of the boards played by picking squares: arrow keys move it, Enter or space picks its square.
    function moveCursor(key) {
      const DELTA = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
      if (board.classList.contains("flipped")) key = { ArrowUp: "ArrowDown", ArrowDown: "ArrowUp", ArrowLeft: "ArrowRight", ArrowRight: "ArrowLeft" }[key];
      if (controls === "grid") {
        const cells = [...board.querySelectorAll("[data-gcell]")].map((r) => r.getAttribute("data-gcell").split(" ").map(Number));
        if (!cells.length) return;
        const nx = Math.max(...cells.map((c) => c[0])) + 1;
        const ny = Math.max(...cells.map((c) => c[1])) + 1;
        const d = DELTA[key];
        const up = board.querySelector("svg").dataset.up === "1" ? 1 : -1; // does a larger row index go up?
        cursor = cursor || [0, 0];
        cursor = [Math.min(nx - 1, Math.max(0, cursor[0] + d[0])), Math.min(ny - 1, Math.max(0, cursor[1] + up * d[1]))];
      } else {
        const n = (view.state.board || "").split("/").length;
        const d = DELTA[key];
        cursor = cursor || [1, 1];
        cursor = [Math.min(n, Math.max(1, cursor[0] + d[0])), Math.min(n, Math.max(1, cursor[1] + d[1]))];
      }
      highlight();
      const name = controls === "grid" ? `square ${cursor[0] + 1}, ${cursor[1] + 1}` : `square ${sq(cursor)}`;
      $("announce").textContent = name;
    }

    document.addEventListener("keydown", (ev) => {
      if (ev.target.closest && ev.target.closest("input, select, textarea")) return;
      // Enter and space on a focused button or link work that button, not the board
      if ((ev.key === "Enter" || ev.key === " ") && ev.target.closest && ev.target.closest("button, a, summary")) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (controls !== "directions") {
        if (ev.key === "Escape" && (selected || dest)) {
          if (dest) dest = null;
          else selected = null;
          renderControls();
          return;
        }
        if (controls !== "move-and-shoot" && controls !== "grid") return;
        if (ev.key in { ArrowUp: 1, ArrowDown: 1, ArrowLeft: 1, ArrowRight: 1 }) {
          ev.preventDefault();
          moveCursor(ev.key);
        } else if ((ev.key === "Enter" || ev.key === " ") && cursor) {
          ev.preventDefault();
          if (controls === "grid") gridClick(cursor.join(" "));
          else cellClick(cursor);
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

    board.dataset.version = "";
    render(view);
    hub.onStatus((online) => online || lost()); // the probe that lost() starts tells when it is back
    // A game of hidden information: the stream carries only what everyone may see, so a browser holding a seat
    // fetches its own view (its percepts, its legal moves; its cookie names the seat) at each change.
    async function followHidden(next) {
      if (older(next)) return;
      let r;
      try {
        r = await api("GET", `/api/games/${id}?svg=1`, undefined, 5000);
      } catch (e) {
        return; // the stream's next update, or the offline probe, tries again
      }
      if (r.ok) render(r.data);
    }
    if (!view.terminal) hub.follow(id, (next) => (next.hidden && mine.size ? followHidden(next) : render(next)));
  }

  // --- the replay viewer -----------------------------------------------------------------------------
  function replayPage(hub) {
    const id = document.body.dataset.gameId;
    let total = Number(document.body.dataset.steps);
    const board = $("board");
    const slider = $("slider");
    const cache = new Map();
    let current = 0;
    let timer = null;

    async function fetchStep(k) {
      if (!cache.has(k)) {
        const got = fetch(`/api/games/${id}/steps/${k}`).then((r) => {
          if (!r.ok) throw new Error(`step ${k}: ${r.status}`);
          return r.json();
        });
        got.catch(() => cache.delete(k)); // not kept: asked again next time
        cache.set(k, got);
      }
      return cache.get(k);
    }

    async function show(k) {
      k = Math.max(0, Math.min(total, k));
      current = k;
      slider.value = String(k);
      $("replay-step").textContent = String(k);
      let d;
      try {
        d = await fetchStep(k);
      } catch (e) {
        $("replay-joint").textContent = "cannot reach the server; try again";
        return;
      }
      if (current !== k) return;
      board.innerHTML = d.svg;
      board.dataset.step = String(k);
      const joint = d.joint
        ? Object.entries(d.readable).filter(([r]) => d.joint[r] !== "noop" || Object.values(d.joint).every((m) => m === "noop"))
        : [];
      $("replay-joint").textContent = joint.length ? joint.map(([r, m]) => `${r} ${m}`).join(" · ") : "initial state";
      $("replay-joint").title = d.joint ? Object.entries(d.joint).map(([r, m]) => `${r} ${m}`).join(" · ") : "";
      $("replay-result").textContent = d.terminal ? d.outcome : "";
      // "continue from here": a new game against the computer from this position (not from one that is over)
      if ($("continue-step")) {
        $("continue-step").value = String(k);
        $("continue-at").textContent = String(k);
        $("continue-button").disabled = Boolean(d.terminal);
      }
      const mark = (node) => node.classList.toggle("current", node.dataset.steps.split(" ").includes(String(k)));
      document.querySelectorAll("#move-list li, #move-list .mv").forEach(mark);
      const li = document.querySelector("#move-list li.current");
      if (li) li.scrollIntoView({ block: "nearest" });
      if (k < total) fetchStep(k + 1).catch(() => {});
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

    function loadMoves() {
      return fetch(`/api/games/${id}`)
        .then((r) => r.json())
        .then((v) => {
          $("move-list").replaceChildren(...turnItems(v.turns || [], show));
        });
    }

    // A game still being played: follow it, and stay on its last step if that is where the viewer is.
    function follow(view) {
      const atEnd = current >= total;
      if (view.step > total) {
        total = view.step;
        slider.max = String(total);
        $("replay-total").textContent = String(total);
        document.body.dataset.steps = String(total);
        loadMoves().then(() => show(atEnd ? total : current));
      }
      if (view.terminal) {
        const live = $("replay-live");
        if (live) live.replaceChildren(view.outcome);
      }
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

    loadMoves().then(() => show(current));
    // A finished game's review: the engine's estimate after each step; a click on a swing goes to its step.
    const graph = $("review-graph");
    if (graph)
      fetch(`/api/games/${id}/review`)
        .then((r) => (r.ok ? r.json() : Promise.reject(r)))
        .then((rev) => {
          graph.classList.remove("muted", "small");
          graph.innerHTML = rev.svg;
          const said = rev.swings.map((k) => `step ${k}`).join(", ");
          graph.append(el("p", { class: "muted small" }, `${rev.role}'s chances as the engine saw them${said ? `; largest swings at ${said}` : ""}.`));
          graph.querySelectorAll(".swing").forEach((dot) => dot.addEventListener("click", () => show(Number(dot.dataset.step))));
        })
        .catch(() => graph.replaceChildren("No review for this game (it is played on the prover)."));
    show(0);
    if (document.body.dataset.live === "true") hub.follow(id, follow);
  }

  // The upload form: a chosen file fills the text box (and the name, if empty).
  function sheetsPage() {
    catalogFilters();
    const file = $("sheet-file");
    if (!file) return;
    file.addEventListener("change", async () => {
      const f = file.files && file.files[0];
      if (!f) return;
      $("sheet-rules").value = await f.text();
      if (!$("sheet-name").value) $("sheet-name").value = f.name.replace(/\.[^.]*$/, "");
    });
  }

  // The catalog's search and filters, on the page's list (every sheet is in it; test sheets hidden by default).
  function catalogFilters() {
    const search = $("catalog-search");
    if (!search) return;
    const items = [...document.querySelectorAll(".sheet-list.catalog li")];
    const apply = () => {
      const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      const players = $("catalog-players").value;
      const moves = $("catalog-moves").value;
      const board = $("catalog-board").value; // (a sheet not yet looked at passes: its data-board is empty)
      const all = $("catalog-all").checked;
      let shown = 0;
      for (const li of items) {
        const n = Number(li.dataset.players || 0);
        const ok =
          (all || !li.dataset.hidden) &&
          words.every((w) => li.textContent.toLowerCase().includes(w) || li.dataset.key.toLowerCase().includes(w)) &&
          (!players || (players === "3" ? n >= 3 : n === Number(players))) &&
          (!moves || li.dataset.moves === moves) &&
          (!board || !li.dataset.board || li.dataset.board === board);
        li.hidden = !ok;
        if (ok) shown += 1;
      }
      $("catalog-count").textContent = String(shown);
      $("catalog-none").hidden = shown > 0;
    };
    for (const id of ["catalog-search", "catalog-players", "catalog-moves", "catalog-board", "catalog-all"]) $(id).addEventListener("input", apply);
    $("catalog-all").addEventListener("change", apply);
  }

  // A live arena match: long-polls the match's view and redraws the board and the move list at each step.
  async function arenaMatchPage() {
    const id = document.body.dataset.matchId;
    let view = JSON.parse($("initial-view").textContent);
    const draw = () => {
      $("board").innerHTML = view.svg;
      $("board").dataset.step = String(view.step);
      $("step").textContent = String(view.step);
      $("arena-status").textContent = view.status;
      const list = $("move-list");
      for (let k = list.children.length; k < view.moves.length; k++) {
        const li = el("li");
        Object.entries(view.moves[k]).forEach(([r, t], i) => {
          if (i) li.append(" · ");
          li.append(el("b", {}, r), ` ${t}`);
        });
        list.append(li);
      }
      list.scrollTop = list.scrollHeight;
      if (view.status !== "running") {
        $("arena-result").textContent = view.outcome || view.error;
        $("downloads").hidden = view.status !== "over";
        $("announce").textContent = `Match ${view.status}. ${view.outcome || ""}`;
      }
    };
    while (view.status === "running") {
      let r;
      try {
        r = await api("GET", `/api/arena/matches/${id}?version=${view.version}&wait=20`, undefined, 30000);
      } catch (e) {
        await sleep(2000);
        continue;
      }
      if (!r.ok) {
        await sleep(2000);
        continue;
      }
      view = r.data;
      draw();
    }
  }

  // The arena page: the list of matches being played is kept up to date.
  async function arenaPage() {
    const box = $("running");
    for (;;) {
      await sleep(3000);
      let r;
      try {
        r = await api("GET", "/api/arena/matches?status=running&limit=20", undefined, 10000);
      } catch (e) {
        continue;
      }
      if (!r.ok) continue;
      const rows = r.data.matches.map((m) =>
        el(
          "tr",
          { class: "status-running" },
          el("td", {}, m.title),
          el("td", {}, ...m.players.flatMap((p, i) => [i ? el("br") : "", `${p.role}: `, el("a", { href: `/arena/players/${p.id}` }, p.name)])),
          el("td", {}, el("span", { class: "live" }, "playing")),
          el("td", { class: "links" }, el("a", { href: `/arena/matches/${m.id}` }, "watch live")),
        ),
      );
      const content = rows.length
        ? el("table", { class: "games arena-matches" }, el("tbody", {}, ...rows))
        : el("p", { class: "muted" }, "No match is being played.");
      box.replaceChildren(el("h2", {}, "Playing now"), content);
    }
  }

  const page = document.body.dataset.page;
  // Starting a game waits for its agents to start, which on a server's first start (empty caches) may take
  // a minute while they compile: say so rather than leave the page looking stuck.
  if (page === "home")
    for (const form of document.querySelectorAll("form.quick, form.new-game"))
      form.addEventListener(
        "submit",
        () => {
          form.setAttribute("aria-busy", "true");
          const note = "Starting the game: the computer is getting ready (a first game after the server starts may take a minute)…";
          form.append(el("p", { class: "muted", role: "status" }, el("span", { class: "spinner", "aria-hidden": "true" }), " ", note));
        },
        { once: true },
      );
  if (page === "arena") arenaPage();
  if (page === "arena-match") arenaMatchPage();
  if (page === "sheets") sheetsPage();
  if (page === "play") {
    const copy = $("copy-link");
    if (copy)
      copy.addEventListener("click", async () => {
        $("invite-link").select();
        try {
          await navigator.clipboard.writeText($("invite-link").value);
          copy.textContent = "Copied";
        } catch (e) {
          copy.textContent = "Select and copy";
        }
      });
  }
  if (page === "play") soundToggle();
  if (page === "play") playPage(makeHub());
  else if (page === "replay") replayPage(makeHub());
})();
