/* The metrics manual in the browser: the reader's profile first, "Is this value normal?" and a copy
   button on each metric key.

   Served by the site itself (no request leaves it). The form reads the profiles' JSON exports
   under export/, the same files tools read, and takes each range's words from the page, so it
   says what the entry says. Every text from the source is set as text (textContent, Option):
   none is read as HTML; nodes the page holds are moved, never rewritten. Without JavaScript the
   form and the profile picker stay hidden and the page shows every profile's ranges. */
(function () {
  "use strict";

  // --- numbers as the manual writes them (model/phrase.py `num`, `measured`) -----------------

  function num(value) {
    if (!Number.isFinite(value)) return String(value);
    if (value !== 0 && (Math.abs(value) < 1e-6 || Math.abs(value) >= 1e15)) return value.toExponential();
    const text = String(Object.is(value, -0) ? 0 : value);
    const sign = text.startsWith("-") ? "-" : "";
    const [whole, fraction] = text.replace("-", "").split(".");
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return sign + grouped + (fraction !== undefined ? "." + fraction : "");
  }

  function measured(value) {
    // Four significant digits; the whole part stays whole.
    const digits = Math.max(4, Math.abs(value) >= 1 && Math.abs(value) < 1e15 ? String(Math.trunc(Math.abs(value))).length : 0);
    return num(Number(value.toPrecision(Math.min(digits, 17))));
  }

  function percent(part) {
    return num(Number((part * 100).toPrecision(3))) + "%";
  }

  // --- one expectation against one value ----------------------------------------------------

  // The steps a range covers, counted from 0 as Miles counts them: null when it covers every step.
  function covered(e) {
    if (e.kind === "band") {
      if (e.window) return { first: e.window.first };
      if (e.steps) return { first: e.steps };
      return null;
    }
    if (e.kind === "exact" && e.at && typeof e.at === "object") return { at: e.at.step };
    if (e.kind === "corridor") return { reference: e.reference.points };
    return null;
  }

  // A corridor at one step, as judge holds it (model/schema.py `Corridor.bounds`): [low, high, reference],
  // or null when its reference has no such step.
  function corridorAt(e, step) {
    const points = e.reference.points;
    let lo = 0, hi = points.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (points[mid][0] === step) {
        const ref = points[mid][1];
        const up = Math.max((e.rel_up ?? 0) * Math.abs(ref), e.abs_floor_up ?? 0);
        const down = Math.max((e.rel_down ?? 0) * Math.abs(ref), e.abs_floor_down ?? 0);
        return [ref - down, ref + up, ref];
      }
      if (points[mid][0] < step) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }

  function corridor(e, value, step) {
    const points = e.reference.points;
    const steps = "steps " + num(points[0][0]) + " to " + num(points[points.length - 1][0]);
    if (step === null) return ["step needed", "a corridor's bounds change at each step of its reference (" + steps + "): type the step"];
    const at = corridorAt(e, step);
    if (at === null) return ["not covered", "its reference has no step " + num(step) + " (it has " + num(points.length) + " " + steps + ")"];
    const [lo, hi, ref] = at;
    const there = "the corridor at step " + num(step) + " is " + measured(lo) + " to " + measured(hi) + " (reference " + measured(ref) + ")";
    if (value < lo) return ["outside", "below " + there + " by " + measured(lo - value)];
    if (value > hi) return ["outside", "above " + there + " by " + measured(value - hi)];
    return ["inside", there];
  }

  function judge(e, value, step, rtol) {
    if (e.kind === "presence") return ["no range", "any value: the manual asks only that it is logged in every step"];
    const span = covered(e);
    if (span && step !== null) {
      if (span.first !== undefined && step >= span.first)
        return ["not covered", "this range holds in the first " + num(span.first) + " steps only (steps from 0)"];
      if (span.at !== undefined && step !== span.at) return ["not covered", "this range holds at step " + num(span.at) + " only"];
    }
    if (e.kind === "band") {
      const lo = e.min ?? -Infinity;
      const hi = e.max ?? Infinity;
      if (value < lo) return ["outside", "below " + num(lo) + " by " + measured(lo - value) + (lo !== 0 ? " (" + percent((lo - value) / Math.abs(lo)) + ")" : "")];
      if (value > hi) return ["outside", "above " + num(hi) + " by " + measured(value - hi) + (hi !== 0 ? " (" + percent((value - hi) / Math.abs(hi)) + ")" : "")];
      return ["inside", ""];
    }
    if (e.kind === "median") {
      const tol = e.tolerance ?? rtol;
      const off = value - e.value;
      const rel = e.value !== 0 ? Math.abs(off) / Math.abs(e.value) : Math.abs(off);
      const side = off > 0 ? "above" : "below";
      const words = off === 0 ? "the median itself" : percent(rel) + " " + side + " the median " + num(e.value);
      const allowed = " (a run's median may be off by " + percent(tol) + (e.tolerance == null ? ", judge's default" : "") + "; compare your run's median over " + num(e.steps) + " steps)";
      return [rel <= tol * (1 + 1e-12) ? "inside" : "outside", words + allowed];
    }
    if (e.kind === "corridor") return corridor(e, value, step);
    if (e.kind === "exact") {
      if (value === e.value) return ["inside", "exactly " + num(e.value)];
      return ["outside", (value > e.value ? "above " : "below ") + num(e.value) + " by " + measured(Math.abs(value - e.value))];
    }
    return ["no range", ""];
  }

  // --- the reader's profile ---------------------------------------------------------------------

  // Picked once and remembered in this browser (localStorage); carried in the address as
  // ?profile=ID, so a shared link shows its reader what its sender saw. A link's choice holds in
  // its tab (sessionStorage) and never replaces the reader's own. The first profile by default.
  const STORE = "metrics-manual.profile";
  const picked = []; // what to do when the reader picks another profile

  function recalled(storage) {
    try {
      return window[storage].getItem(STORE);
    } catch (_) {
      return null; // storage off (a private window, a file:// page): the choice lasts this page
    }
  }

  function remember(storage, id) {
    try {
      window[storage].setItem(STORE, id);
    } catch (_) {}
  }

  function profiles() {
    const select = document.querySelector("form.mm-pick select");
    return select ? [...select.options].map((o) => o.value) : [];
  }

  function chosenProfile(ids) {
    const linked = new URLSearchParams(location.search).get("profile");
    if (ids.includes(linked)) {
      remember("sessionStorage", linked);
      return linked;
    }
    for (const id of [recalled("sessionStorage"), recalled("localStorage")]) if (ids.includes(id)) return id;
    return ids[0];
  }

  function inAddress(id) {
    const url = new URL(location.href);
    url.searchParams.set("profile", id);
    try {
      history.replaceState(history.state, "", url.href);
    } catch (_) {} // a page opened from a file may refuse it
  }

  // Each entry: the profile's block of ranges in the first place, the others folded in profile order.
  function entriesFirst(id, ids, fold) {
    for (const others of document.querySelectorAll(".mm-entry details.mm-others")) {
      const blocks = [...others.closest(".mm-entry").querySelectorAll(".mm-for")];
      const shown = blocks.find((b) => !others.contains(b));
      const mine = blocks.find((b) => b.dataset.profile === id);
      if (mine && shown && mine !== shown) {
        shown.replaceWith(mine);
        for (const pid of ids) {
          const block = blocks.find((b) => b.dataset.profile === pid);
          if (block && block !== mine) others.append(block);
        }
      }
      if (fold) others.open = false;
    }
  }

  // Each table of ranges: the profile's column first (on a phone, the only one: extra.css).
  function columnsFirst(id, ids) {
    for (const table of document.querySelectorAll("table.mm-table")) {
      for (const row of table.rows) {
        const cells = [...row.cells].filter((c) => c.dataset.for);
        const mine = cells.find((c) => c.dataset.for === id);
        if (!mine || cells.length < 2) continue;
        cells[0].before(mine);
        let at = mine;
        for (const pid of ids) {
          const cell = cells.find((c) => c.dataset.for === pid);
          if (cell && cell !== mine) {
            at.after(cell);
            at = cell;
          }
        }
        for (const cell of cells) cell.classList.toggle("mm-chosen", cell === mine);
      }
      table.classList.add("mm-picked");
    }
  }

  function profileChoice() {
    const ids = profiles();
    if (ids.length < 2) return ids[0] || null;
    let id = chosenProfile(ids);
    const form = document.querySelector("form.mm-pick");
    const select = form.querySelector("select");
    const show = (fold) => {
      select.value = id;
      entriesFirst(id, ids, fold);
      columnsFirst(id, ids);
    };
    show(true);
    inAddress(id);
    select.addEventListener("change", () => {
      if (!ids.includes(select.value)) return;
      id = select.value;
      remember("localStorage", id);
      remember("sessionStorage", id);
      inAddress(id);
      show(false);
      for (const then of picked) then(id);
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    form.hidden = false;
    return id;
  }

  // --- the form ------------------------------------------------------------------------------

  function parseNumber(text) {
    const t = text.trim().replace(/,/g, "").replace(/\u2212/g, "-");
    if (t === "" || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
    const v = Number(t);
    return Number.isFinite(v) ? v : null;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function phrase(profile, key, index, e) {
    // The range in the entry's own words, found by data attributes (compared as values, not as selectors).
    for (const span of document.querySelectorAll(".mm-entry .mm-range[data-profile], .mm-table .mm-cell[data-profile]")) {
      if (span.dataset.profile === profile && span.dataset.key === key && span.dataset.index === String(index))
        return span.textContent;
    }
    return e.kind;
  }

  function setUp(form, docs, chosen) {
    let current = chosen;
    const select = form.querySelector("select[name=metric]");
    const valueBox = form.querySelector("input[name=value]");
    const stepBox = form.querySelector("input[name=step]");
    const stepLabel = form.querySelector(".mm-check-step");
    const out = form.querySelector(".mm-check-out");
    const rtol = Number(form.dataset.rtol);
    const byKey = new Map();
    for (const doc of docs) {
      for (const m of doc.metrics) {
        if (!byKey.has(m.key)) byKey.set(m.key, { label: m.name || m.key, ranges: [] });
        byKey.get(m.key).ranges.push({ profile: doc.profile, expectations: m.expectations });
      }
    }
    // The entries on this page (a section's page offers its own metrics); the entry landed on is picked.
    const anchors = new Map();
    for (const h of document.querySelectorAll("h3.mm-key")) {
      const code = h.querySelector("code");
      if (code) anchors.set(h.id, code.textContent);
    }
    const here = new Set(anchors.values());
    for (const [key, m] of byKey) {
      if ((here.size === 0 || here.has(key)) && m.ranges.some((r) => r.expectations.length))
        select.append(new Option(m.label, key));
    }
    if (!select.options.length) return; // nothing on this page has a range: the form stays hidden
    function pickFromHash() {
      const key = anchors.get(decodeURIComponent(location.hash.slice(1)));
      if (key && byKey.has(key) && [...select.options].some((o) => o.value === key)) select.value = key;
    }

    function update() {
      const m = byKey.get(select.value);
      out.replaceChildren();
      if (!m) return;
      const stepMatters = m.ranges.some((r) => r.expectations.some((e) => covered(e) !== null));
      stepLabel.hidden = !stepMatters;
      const value = parseNumber(valueBox.value);
      if (valueBox.value.trim() === "") return;
      if (value === null) {
        out.append(el("p", "mm-check-error", "Type a number, such as 5.1 or 1e-3."));
        return;
      }
      const stepText = stepMatters ? stepBox.value.trim() : "";
      const step = stepText === "" ? null : parseNumber(stepText);
      if (stepText !== "" && (step === null || step < 0 || !Number.isInteger(step))) {
        out.append(el("p", "mm-check-error", "A step is a whole number from 0."));
        return;
      }
      // The reader's profile judges; the others' verdicts are folded below it.
      const mine = m.ranges.filter((r) => r.profile.id === current);
      const others = m.ranges.filter((r) => r.profile.id !== current);
      const verdicts = (ranges) => {
        const list = el("ul");
        for (const r of ranges) {
          if (!r.expectations.length) {
            const li = el("li", "mm-check-none");
            li.dataset.profile = r.profile.id;
            li.dataset.verdict = "no range";
            li.append(el("span", "mm-verdict", "no range"), el("span", "mm-profile", r.profile.title));
            list.append(li);
            continue;
          }
          r.expectations.forEach((e, i) => {
            const [verdict, words] = judge(e, value, step, rtol);
            const li = el("li", "mm-check-" + verdict.replace(" ", "-"));
            li.dataset.profile = r.profile.id;
            li.dataset.verdict = verdict;
            li.append(
              el("span", "mm-verdict", verdict),
              el("span", "mm-range", phrase(r.profile.id, select.value, i, e)),
              el("span", "mm-profile", r.profile.title),
              el("span", "mm-check-words", words ? ": " + words : ""),
            );
            list.append(li);
          });
        }
        return list;
      };
      out.append(verdicts(mine.length ? mine : others));
      if (mine.length && others.length) {
        const more = el("details", "mm-check-others");
        more.append(el("summary", "", "Other profiles (" + others.length + ")"), verdicts(others));
        out.append(more);
      }
    }

    for (const box of [select, valueBox, stepBox]) box.addEventListener("input", update);
    select.addEventListener("change", update);
    form.addEventListener("submit", (event) => event.preventDefault());
    window.addEventListener("hashchange", () => {
      pickFromHash();
      update();
    });
    picked.push((id) => {
      current = id;
      update();
    });
    pickFromHash();
    update();
    showAbove(form);
  }

  // The form shows once the exports are read, after a link has landed on an entry below it: the
  // entry stays where the reader sees it rather than moving down by the form's height.
  function showAbove(form) {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    const below = target && form.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_FOLLOWING;
    const before = below ? target.getBoundingClientRect().top : NaN;
    form.hidden = false;
    if (before >= 0 && before < window.innerHeight) window.scrollBy(0, target.getBoundingClientRect().top - before);
  }

  function valueCheck(chosen) {
    const form = document.querySelector("form.mm-check");
    if (!form) return;
    const ids = (form.dataset.profiles || "").split(" ").filter((id) => /^[a-z0-9-]+$/.test(id));
    // The exports lie under the site's root: Material states the root relative to this page.
    let root = ".";
    try {
      root = JSON.parse(document.getElementById("__config").textContent).base || ".";
    } catch (_) {}
    const base = new URL(root.replace(/\/?$/, "/") + (form.dataset.export || "export/"), location.href);
    if (base.origin !== location.origin) return; // the exports of this site only
    Promise.all(ids.map((id) => fetch(new URL(id + ".json", base)).then((r) => (r.ok ? r.json() : Promise.reject(r.status)))))
      .then((docs) => setUp(form, docs, chosen))
      .catch((error) => console.warn("metrics manual: the value checker is off:", error)); // offline from a file, or an export missing: the page reads on
  }

  // --- a copy button on each metric key ----------------------------------------------------------

  function copyButtons() {
    for (const h of document.querySelectorAll("h3.mm-key")) {
      const code = h.querySelector("code");
      if (!code || h.querySelector(".mm-copy")) continue;
      const button = el("button", "mm-copy", "copy");
      button.type = "button";
      button.title = "Copy the key";
      button.setAttribute("aria-label", "Copy the key " + code.textContent);
      button.addEventListener("click", (event) => {
        event.preventDefault();
        const done = () => {
          button.textContent = "copied";
          setTimeout(() => (button.textContent = "copy"), 1500);
        };
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(code.textContent).then(done, () => {});
        else {
          const area = el("textarea");
          area.value = code.textContent;
          document.body.append(area);
          area.select();
          document.execCommand("copy");
          area.remove();
          done();
        }
      });
      const permalink = h.querySelector("a.headerlink");
      h.insertBefore(button, permalink);
    }
  }

  function start() {
    const chosen = profileChoice();
    copyButtons();
    valueCheck(chosen);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
